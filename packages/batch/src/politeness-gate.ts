import { InvalidOptionError } from '@usp-ts/core';
import { WaiterQueue } from './waiter-queue.js';

/** Gives the slot back; calling it more than once is harmless. */
export type GateRelease = () => void;

/**
 * Per-host politeness shared by every walk of a batch: how many requests may be in flight to one
 * host name, and how long to wait between two of them. A request waits here before it takes any
 * resource of the web client, so a slow host keeps its own walks waiting and nobody else.
 * `hostGate()` is the in-process implementation; a distributed runner brings one backed by its
 * queue's store.
 */
export interface PolitenessGate {
  /**
   * Resolves once a request to `host` may start; the caller releases the slot when the response
   * body is read or dropped. Rejects (with the signal's reason) when `signal` aborts first.
   */
  acquire(host: string, signal?: AbortSignal): Promise<GateRelease>;
  /**
   * robots.txt asked for this pause between request starts to `host` (the in-process gate caps
   * it at `maxCrawlDelayMs`); 0 removes it. A shared gate may answer asynchronously.
   */
  setCrawlDelay(host: string, delayMs: number): void | Promise<void>;
}

export interface HostGateOptions {
  /** Requests in flight to one host name at most (default 2). */
  readonly perHost?: number;
  /** The longest `Crawl-delay` honoured, in ms (default 10,000); longer ones are cut to it. */
  readonly maxCrawlDelayMs?: number;
}

export const DEFAULT_PER_HOST = 2;
export const DEFAULT_MAX_CRAWL_DELAY_MS = 10_000;

interface Host {
  inFlight: number;
  delayMs: number;
  /** Earliest start of the next request (Crawl-delay spacing). */
  nextStartAt: number;
  readonly waiters: WaiterQueue<GateRelease>;
  timer: ReturnType<typeof setTimeout> | null;
}

/**
 * The in-process gate: a FIFO per host, `perHost` requests in flight, starts spaced by the host's
 * crawl delay. Hosts with nothing in flight or waiting are forgotten (memory stays flat over a
 * run of 100k sites), except those with a crawl delay.
 */
export function hostGate(options: HostGateOptions = {}): PolitenessGate {
  const perHost = options.perHost ?? DEFAULT_PER_HOST;
  const maxDelay = options.maxCrawlDelayMs ?? DEFAULT_MAX_CRAWL_DELAY_MS;
  if (!Number.isInteger(perHost) || perHost < 1)
    throw new InvalidOptionError('perHost', 'must be an integer >= 1');
  if (typeof maxDelay !== 'number' || !(maxDelay >= 0)) {
    throw new InvalidOptionError('maxCrawlDelayMs', 'must be a number >= 0');
  }
  const hosts = new Map<string, Host>();

  const hostOf = (name: string): Host => {
    let h = hosts.get(name);
    if (h === undefined) {
      h = { inFlight: 0, delayMs: 0, nextStartAt: 0, waiters: new WaiterQueue(), timer: null };
      hosts.set(name, h);
    }
    return h;
  };

  const forget = (name: string, h: Host): void => {
    if (h.inFlight === 0 && h.waiters.length === 0 && h.delayMs === 0 && h.timer === null) hosts.delete(name);
  };

  const grant = (name: string, h: Host): GateRelease => {
    h.inFlight++;
    h.nextStartAt = Date.now() + h.delayMs;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      h.inFlight--;
      pump(name, h);
    };
  };

  const pump = (name: string, h: Host): void => {
    while (h.waiters.length > 0 && h.inFlight < perHost) {
      const wait = h.nextStartAt - Date.now();
      if (wait > 0) {
        h.timer ??= setTimeout(() => {
          h.timer = null;
          pump(name, h);
        }, wait);
        return;
      }
      h.waiters.resolveFirst(grant(name, h));
    }
    forget(name, h);
  };

  return {
    acquire(name, signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      const h = hostOf(name);
      if (h.waiters.length === 0 && h.inFlight < perHost && h.nextStartAt <= Date.now()) {
        return Promise.resolve(grant(name, h));
      }
      const waiting = h.waiters.wait(signal, () => pump(name, h));
      pump(name, h);
      return waiting;
    },
    setCrawlDelay(name, delayMs) {
      if (!(delayMs >= 0)) return;
      const h = hostOf(name);
      h.delayMs = Math.min(delayMs, maxDelay);
      forget(name, h);
    },
  };
}
