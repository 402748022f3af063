import type { PolitenessGate } from '@usp-ts/batch';
import { GateClient } from './gate-client.js';
import { closedError, type GateContext, GateHost } from './gate-host.js';
import { IdleLinger } from './gate-linger.js';
import {
  type RedisGateConfig,
  type RedisGateOptions,
  resolveRedisGateOptions,
} from './redis-gate-options.js';

export type { RedisGateOptions } from './redis-gate-options.js';

/** The gate returned by `redisPolitenessGate`; `close()` ends its connections and renewals. */
export interface RedisPolitenessGate extends PolitenessGate {
  /** As the interface's; the promise settles once Redis has the delay (callers need not wait). */
  setCrawlDelay(host: string, delayMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A per-host politeness gate shared by every process that uses the same Redis: at most `perHost`
 * requests in flight to one host, and the host's Crawl-delay between request starts, whichever
 * machine makes them. The single-machine gate of the batch package implements the same interface.
 *
 * Each request holds a lease (a sorted-set entry with an expiry) that its process renews while the
 * request runs; a process killed with -9 stops renewing, and its slots come back after `leaseMs`.
 * The parts: the options (redis-gate-options.ts), the Lua scripts' client (gate-client.ts), each
 * host's leases and waiters (gate-host.ts, its queue batch's `WaiterQueue` as the in-process
 * gate's is) and the timer that gives idle slots back (gate-linger.ts).
 */
export function redisPolitenessGate(options: RedisGateOptions): RedisPolitenessGate {
  return new RedisGate(resolveRedisGateOptions(options));
}

class RedisGate implements RedisPolitenessGate, GateContext {
  readonly #config: RedisGateConfig;
  readonly client: GateClient;
  readonly linger: IdleLinger;
  readonly perHost: number;
  closed = false;
  readonly #hosts = new Map<string, GateHost>();
  /** Crawl-delays this process wrote last, so a site walked again does not write it again. */
  readonly #delays = new Map<string, number>();
  readonly #renewTimer: ReturnType<typeof setInterval>;

  constructor(config: RedisGateConfig) {
    this.#config = config;
    this.perHost = config.perHost;
    this.client = new GateClient(config, (kind, host) => {
      const h = this.#hosts.get(host);
      if (h === undefined) return;
      if (kind === 'wanted') h.onWanted();
      else h.onReleased();
    });
    this.linger = new IdleLinger(config.keepIdleMs, config.maxKeepMs, () => this.closed);
    this.#renewTimer = setInterval(
      () => {
        for (const h of this.#hosts.values()) h.renew();
      },
      Math.max(1, Math.floor(config.leaseMs / 3)),
    );
    this.#renewTimer.unref();
  }

  drop(h: GateHost): void {
    if (this.#hosts.get(h.name) === h) this.#hosts.delete(h.name);
  }

  #hostOf(host: string): GateHost {
    let h = this.#hosts.get(host);
    if (h === undefined) {
      h = new GateHost(host, this, this.#delays.get(host) ?? 0);
      this.#hosts.set(host, h);
    }
    return h;
  }

  acquire(host: string, signal?: AbortSignal) {
    if (this.closed) return Promise.reject(closedError());
    if (signal?.aborted) return Promise.reject(signal.reason);
    return this.#hostOf(host).acquire(signal);
  }

  setCrawlDelay(host: string, delayMs: number): Promise<void> {
    if (!(delayMs >= 0) || this.closed) return Promise.resolve();
    const ms = Math.round(Math.min(delayMs, this.#config.maxCrawlDelayMs));
    this.#hosts.get(host)?.setDelay(ms);
    // Every walk of a site reads its robots.txt: write only what changed.
    const delays = this.#delays;
    if (delays.get(host) === ms) return Promise.resolve();
    delays.set(host, ms);
    if (delays.size > 10_000) delays.delete(delays.keys().next().value as string);
    return this.client.writeCrawlDelay(host, ms).then(
      () => {},
      () => {
        // Unreachable: the next walk of the host sets it again.
        delays.delete(host);
      },
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.#renewTimer);
    this.linger.close();
    // Give back what is still held so other processes need not wait for the leases to expire.
    const pending: Promise<unknown>[] = [];
    for (const h of this.#hosts.values()) {
      const given = h.close();
      if (given !== null) pending.push(given);
    }
    this.#hosts.clear();
    await Promise.all(pending);
    await this.client.close();
  }
}
