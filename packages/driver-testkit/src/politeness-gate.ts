import type { GateRelease, PolitenessGate } from '@usp-ts/batch';
import { afterEach, describe, expect, it } from 'vitest';

/** The limits the suite opens a gate with. */
export interface GateLimits {
  /** Requests in flight to one host at most. */
  readonly perHost: number;
  /** The longest crawl delay honoured, in ms. */
  readonly maxCrawlDelayMs: number;
}

/** How the suite gets a gate, and gives it back. */
export interface PolitenessGateFactory {
  /** A new gate with these limits, sharing nothing with gates opened before (fresh host names help). */
  open(limits: GateLimits): Promise<PolitenessGate>;
  /** Releases what the gate holds (connections, timers); omit when there is nothing to release. */
  close?(gate: PolitenessGate): Promise<void>;
}

/** Lets other callbacks run: a holder keeps its slot across a few turns of the event loop. */
const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

let hostSeq = 0;
/** A host name no earlier test used (a shared gate's state outlives a test). */
const freshHost = (): string => `h${process.pid}-${Date.now()}-${hostSeq++}.gate.example`;

/**
 * The contract of `PolitenessGate` (`@usp-ts/batch`), as every gate must keep it: never more than
 * `perHost` requests in flight to one host, hosts independent, a release given twice counting
 * once, a waiter whose signal aborts leaving with the signal's reason and taking no slot, and
 * starts spaced by a host's crawl delay, capped. Call it at the top level of a test file. No test
 * sleeps to pass: the delay test waits only for the gate itself.
 */
export function politenessGateSuite(name: string, factory: PolitenessGateFactory): void {
  describe(`politeness gate contract: ${name}`, () => {
    const opened: PolitenessGate[] = [];
    const open = async (limits: Partial<GateLimits> = {}) => {
      const gate = await factory.open({ perHost: 2, maxCrawlDelayMs: 10_000, ...limits });
      opened.push(gate);
      return gate;
    };
    afterEach(async () => {
      for (const g of opened.splice(0)) await factory.close?.(g);
    });

    /** Runs `tasks` requests to `host`, each holding its slot a few turns; the most in flight at once. */
    const mostInFlight = async (gate: PolitenessGate, host: string, tasks: number, releaseTwice = false) => {
      let inFlight = 0;
      let most = 0;
      await Promise.all(
        Array.from({ length: tasks }, async () => {
          const release = await gate.acquire(host);
          inFlight++;
          most = Math.max(most, inFlight);
          await turns(3);
          inFlight--;
          release();
          if (releaseTwice) release();
        }),
      );
      return most;
    };

    it('lets perHost requests be in flight to one host, never more', async () => {
      const gate = await open({ perHost: 3 });
      expect(await mostInFlight(gate, freshHost(), 12)).toBe(3);
    });

    it('counts a release given twice once', async () => {
      const gate = await open({ perHost: 2 });
      expect(await mostInFlight(gate, freshHost(), 10, true)).toBe(2);
    });

    it('keeps hosts apart: a host at its limit does not hold another back', async () => {
      const gate = await open({ perHost: 1 });
      const busy = freshHost();
      const held = await gate.acquire(busy);
      const other = await gate.acquire(freshHost());
      other();
      held();
    });

    it('rejects a waiter whose signal aborts with its reason, and the slot goes to the next one', async () => {
      const gate = await open({ perHost: 1 });
      const host = freshHost();
      const held = await gate.acquire(host);
      const stop = new AbortController();
      const waiting = gate.acquire(host, stop.signal);
      const next = gate.acquire(host);
      const reason = new Error('walk stopped');
      stop.abort(reason);
      await expect(waiting).rejects.toBe(reason);
      held();
      const release: GateRelease = await next;
      release();
    });

    it('rejects at once when the signal has already aborted', async () => {
      const gate = await open();
      const reason = new Error('already stopped');
      await expect(gate.acquire(freshHost(), AbortSignal.abort(reason))).rejects.toBe(reason);
    });

    it('spaces starts to a host by its crawl delay', async () => {
      const gate = await open({ perHost: 2 });
      const host = freshHost();
      await gate.setCrawlDelay(host, 150);
      // Timed from before the first start: a gate may record a start on its own clock (Redis's)
      // before the answer reaches us, so only this reading bounds the gap from below.
      const first = performance.now();
      (await gate.acquire(host))();
      (await gate.acquire(host))();
      expect(performance.now() - first).toBeGreaterThanOrEqual(140);
    });

    it('cuts a crawl delay longer than maxCrawlDelayMs to it', async () => {
      const gate = await open({ maxCrawlDelayMs: 50 });
      const host = freshHost();
      // An hour, cut to 50 ms: the test ends by itself only if the cap holds.
      await gate.setCrawlDelay(host, 3_600_000);
      const started = performance.now();
      (await gate.acquire(host))();
      (await gate.acquire(host))();
      expect(performance.now() - started).toBeGreaterThanOrEqual(40);
    });
  });
}
