import { type GateRelease, WaiterQueue } from '@usp-ts/batch';
import { UspError } from '@usp-ts/core';
import type { GateClient, HostKeys } from './gate-client.js';
import type { IdleLinger, LingeringHost } from './gate-linger.js';

/**
 * How many requests in a row one lease may serve before it goes back to Redis, where another
 * process waiting for the host can get it: a process with a long queue for a host must not keep
 * its slots for ever.
 */
const MAX_HANDOVERS = 16;

/** What the hosts of one gate share. */
export interface GateContext {
  readonly client: GateClient;
  readonly linger: IdleLinger;
  readonly perHost: number;
  /** Whether the gate is closed. */
  readonly closed: boolean;
  /** The host has nothing held, queued or asked: the gate may forget it. */
  drop(h: GateHost): void;
}

export function closedError(): UspError {
  return new UspError('USP_CLOSED', 'the politeness gate is closed');
}

/**
 * This process's side of one host: its leases, its queue, its asks to Redis. A request takes a
 * slot of its host in one of two ways: from Redis (a lease, one round trip, refused while
 * `perHost` leases are out across all processes), or from a request of this process that just
 * ended and had one, when the host has no Crawl-delay. The second is the common case (a site's
 * robots.txt, sitemaps and known paths queue behind each other for the same host) and costs no
 * round trip; the number of slots taken across all processes is the same, so the per-host limit
 * stays exact.
 */
export class GateHost implements LingeringHost {
  readonly name: string;
  readonly #ctx: GateContext;
  /** The host's keys in Redis (leases, next, delay, waiting), made once. */
  readonly keys: HostKeys;
  /** Lease ids held (renewed on the timer while the requests run). */
  readonly held = new Set<string>();
  /** Requests waiting, in order. */
  readonly queue = new WaiterQueue<GateRelease>();
  /** Slots asked of Redis by the asks in flight (an ask may want several: see `pump`). */
  #asking = 0;
  /** Wakes the asks sleeping on a refusal (a release of this host was published). */
  readonly #sleepers = new Set<() => void>();
  /** Wake-ups that came while an ask was between its refusal and its sleep: it asks again at once. */
  #missed = 0;
  /** Leases held with no request of this process on them (see `keepIdleMs`), with the uses they served. */
  readonly #idle = new Map<string, number>();
  /** When every slot held fell idle (`performance.now()`), or -1: see `keepIdleMs`. */
  idleSince = -1;
  /** The host's Crawl-delay as Redis last said (or this process set): slots are handed on only without one. */
  delayMs: number;

  constructor(name: string, ctx: GateContext, delayMs: number) {
    this.name = name;
    this.#ctx = ctx;
    this.keys = ctx.client.keysOf(name);
    this.delayMs = delayMs;
  }

  /** A request of this process wants a slot of the host. */
  acquire(signal: AbortSignal | undefined): Promise<GateRelease> {
    // A slot this process keeps idle, nobody of it waiting first: the request takes it at once.
    // Most of a walk's requests come this way (robots.txt, then each sitemap after the one
    // before), and a waiter's promise, its abort listener and the hand-over through `pump`
    // were the gate's own CPU per request (bench:queue), as the local gate's fast path avoids.
    if (this.queue.length === 0 && this.delayMs === 0) {
      const kept = this.#takeIdle();
      if (kept !== null) return Promise.resolve(this.#releaseOf(kept.id, kept.uses + 1));
    }
    const waiting = this.queue.wait(signal, () => this.forget());
    this.pump();
    return waiting;
  }

  /** Robots.txt set the host's Crawl-delay: kept slots are not handed on under one. */
  setDelay(ms: number): void {
    this.delayMs = ms;
    if (ms > 0) this.giveBackIdle(0);
  }

  /** One lease of the host was released (in any process): one sleeping ask can succeed now. */
  onReleased(): void {
    for (const wake of this.#sleepers) {
      wake();
      return;
    }
    // The message may overtake the reply of the refused ask it is meant for (another connection).
    if (this.#asking > 0) this.#missed++;
  }

  /** Another process was refused a slot of the host: the idle ones go to it. */
  onWanted(): void {
    if (this.#idle.size > 0) this.giveBackIdle(1);
  }

  renew(): void {
    if (this.held.size > 0) this.#ctx.client.renew(this.keys, this.held);
  }

  forget(): void {
    if (this.held.size === 0 && this.queue.length === 0 && this.#asking === 0) this.#ctx.drop(this);
  }

  /** The gate closes: waiters fail, sleeping asks end, held leases go back (the promise). */
  close(): Promise<unknown> | null {
    for (const wake of this.#sleepers) wake();
    this.queue.rejectAll(closedError());
    const pending = this.held.size > 0 ? this.#giveBack([...this.held]) : null;
    this.held.clear();
    return pending;
  }

  #giveBack(ids: readonly string[], yieldSlot: 0 | 1 = 0): Promise<unknown> {
    // Also after close(): an ask in flight then is granted before close() has its replies.
    return this.#ctx.client.release(this.keys, this.name, ids, yieldSlot);
  }

  /** Hands lease `id` to the first waiter of the host, for its `uses`-th request. */
  #grant(id: string, uses: number): void {
    this.queue.resolveFirst(this.#releaseOf(id, uses));
  }

  /** The release of a request that runs on lease `id`, its `uses`-th. */
  #releaseOf(id: string, uses: number): GateRelease {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (this.#ctx.closed) return;
      const more = this.queue.length > 0 && this.delayMs === 0 && this.held.has(id);
      if (more && uses < MAX_HANDOVERS) {
        this.#grant(id, uses + 1);
        return;
      }
      if (!more && this.delayMs === 0 && uses < MAX_HANDOVERS && this.held.has(id)) {
        this.#keep(id, uses);
        return;
      }
      this.held.delete(id);
      // At the end of a run of handovers, a process that waits for the host gets this slot next
      // (the ask started by `pump` reaches Redis after the release, on the same connection).
      this.#giveBack([id], more ? 1 : 0);
      this.pump();
      this.#lingerIfIdle();
    };
  }

  /** Keeps lease `id` (held, no request on it) for the host's next request. */
  #keep(id: string, uses: number): void {
    this.#idle.set(id, uses);
    this.#lingerIfIdle();
  }

  /**
   * Once no request of the host is in flight here, its idle slots go back when they have been
   * idle `keepIdleMs`, with the next ask or on the linger's timer.
   */
  #lingerIfIdle(): void {
    if (this.#idle.size === 0 || this.idleSince >= 0) return;
    if (this.#idle.size < this.held.size && this.delayMs === 0) return;
    this.#ctx.linger.start(this);
  }

  /**
   * Gives every idle slot of the host back in one call (a walk's slots fall idle together at its
   * end); with `yieldSlot`, one is reserved for the process that waits longest.
   */
  giveBackIdle(yieldSlot: 0 | 1): void {
    this.#ctx.linger.end(this);
    if (this.#idle.size === 0) return;
    const ids = [...this.#idle.keys()];
    this.#idle.clear();
    for (const id of ids) this.held.delete(id);
    this.#giveBack(ids, yieldSlot);
    this.forget();
  }

  /** Takes a lease kept idle for the host's next request, if any, and ends the host's linger. */
  #takeIdle(): { id: string; uses: number } | null {
    for (const [id, uses] of this.#idle) {
      this.#ctx.linger.end(this);
      this.#idle.delete(id);
      return { id, uses };
    }
    return null;
  }

  /** Starts as many asks to Redis as there are waiters without a slot, up to the free slots. */
  pump(): void {
    const perHost = this.#ctx.perHost;
    if (this.delayMs > 0) {
      // Slots are not handed on under a Crawl-delay (each request start is spaced by Redis).
      if (this.#idle.size > 0) this.giveBackIdle(0);
    } else {
      while (this.queue.length > 0) {
        const kept = this.#takeIdle();
        if (kept === null) break;
        this.#grant(kept.id, kept.uses + 1);
      }
    }
    while (this.queue.length > this.#asking && this.held.size + this.#asking < perHost && !this.#ctx.closed) {
      // Without a Crawl-delay, the first ask takes every free slot: the walk's next requests to
      // the host follow soon, and each slot taken now is a round trip saved then.
      const want = this.delayMs === 0 ? perHost - this.held.size - this.#asking : 1;
      this.#asking += want;
      void this.#ask(want);
    }
    this.forget();
  }

  /**
   * Asks Redis for up to `want` leases until some are granted or nobody of this process waits for
   * them any more.
   */
  async #ask(want: number): Promise<void> {
    const client = this.#ctx.client;
    const id = client.nextLeaseId();
    try {
      await client.subscribed;
      for (;;) {
        // Slots long idle go back in the same write as this ask.
        this.#ctx.linger.giveBackDue();
        const [granted, waitMs, delayMs] = await client.acquire(this.keys, this.name, id, want);
        this.delayMs = delayMs;
        if (granted > 0) {
          this.#granted(id, granted, want);
          return;
        }
        if (this.queue.length <= this.#asking - want || this.#ctx.closed) break;
        if (this.#missed > 0) {
          this.#missed--;
          continue;
        }
        // Wait for a release of this host, or for the time Redis said a retry can succeed.
        await sleep(this.#sleepers, waitMs);
        if (this.queue.length <= this.#asking - want || this.#ctx.closed) break;
      }
    } catch (error) {
      // Redis refused the script (not a connection loss: ioredis waits those out): the waiters fail.
      this.#asking -= want;
      this.queue.rejectAll(error);
      this.forget();
      return;
    }
    this.#asking -= want;
    if (this.#ctx.closed) this.queue.rejectAll(closedError());
    this.forget();
  }

  /** Redis granted `granted` leases to the ask of `want` whose first lease is `id`. */
  #granted(id: string, granted: number, want: number): void {
    this.#asking -= want;
    this.#missed = 0;
    const ids = [id];
    for (let k = 2; k <= granted; k++) ids.push(`${id}+${k}`);
    if (this.#ctx.closed) {
      this.#giveBack(ids);
    } else {
      for (const lease of ids) {
        this.held.add(lease);
        // A slot nobody here waits for yet (every waiter gave up, or taken ahead) is kept.
        if (this.queue.length > 0) this.#grant(lease, 1);
        else this.#keep(lease, 0);
      }
    }
    this.pump();
  }
}

/** Until one of `sleepers` is called (a release of the host was published), or `waitMs` passed. */
function sleep(sleepers: Set<() => void>, waitMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const wake = () => {
      clearTimeout(timer);
      sleepers.delete(wake);
      resolve();
    };
    const timer = setTimeout(wake, Math.max(1, waitMs));
    sleepers.add(wake);
  });
}
