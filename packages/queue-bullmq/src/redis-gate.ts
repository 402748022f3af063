import { DEFAULT_MAX_CRAWL_DELAY_MS, type GateRelease, type PolitenessGate } from '@usp-ts/batch';
import { InvalidOptionError, rejectUnknownOptions, UspError } from '@usp-ts/core';
import { Redis } from 'ioredis';
import { checkConnection, type RedisConnection } from './connection.js';
import { ACQUIRE_LUA, RENEW_LUA } from './gate-scripts.js';

/** Options of `redisPolitenessGate`. */
export interface RedisGateOptions {
  /** A `redis://` URL, or an ioredis client the caller owns (the gate duplicates it, never closes it). */
  readonly connection: RedisConnection;
  /** Requests in flight to one host across every process sharing the Redis. Default 2. */
  readonly perHost?: number;
  /**
   * How long a lease lives unless renewed. A holder renews its leases every third of this, so a
   * killed worker's slots come back within `leaseMs` at most. Default 30,000 ms.
   */
  readonly leaseMs?: number;
  /**
   * Longest a waiter sleeps before asking Redis again. Releases wake waiters at once through
   * pub/sub; this only bounds the wait when such a message is lost (e.g. across a reconnect).
   * Default 1,000 ms.
   */
  readonly maxWaitMs?: number;
  /** The longest Crawl-delay honoured; longer ones are cut to it. Default 10,000 ms. */
  readonly maxCrawlDelayMs?: number;
  /** How long a host's Crawl-delay is remembered after it was last set. Default 24 h. */
  readonly crawlDelayTtlMs?: number;
  /** Prefix of every key and of the wake-up channel. Default `usp:gate:`. */
  readonly prefix?: string;
}

const OPTION_KEYS = {
  connection: true,
  perHost: true,
  leaseMs: true,
  maxWaitMs: true,
  maxCrawlDelayMs: true,
  crawlDelayTtlMs: true,
  prefix: true,
} satisfies Record<keyof RedisGateOptions, true>;

function positiveInt(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1) return value;
  throw new InvalidOptionError(name, `expected an integer >= 1, got ${String(value)}`);
}

interface Waiter {
  readonly host: string;
  /** Asks Redis again now (woken by a release of the host). */
  retry(): void;
}

interface GateCommands {
  uspGateAcquire(
    leases: string,
    next: string,
    delay: string,
    leaseId: string,
    perHost: number,
    leaseMs: number,
    maxWaitMs: number,
  ): Promise<[number, number]>;
  uspGateRenew(leases: string, leaseMs: number, ...ids: string[]): Promise<number>;
}

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
 */
export function redisPolitenessGate(options: RedisGateOptions): RedisPolitenessGate {
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionError('options', 'expected an object');
  }
  rejectUnknownOptions(options, OPTION_KEYS);
  const connection = checkConnection(options.connection);
  const perHost = positiveInt('perHost', options.perHost, 2);
  const leaseMs = positiveInt('leaseMs', options.leaseMs, 30_000);
  const maxWaitMs = positiveInt('maxWaitMs', options.maxWaitMs, 1_000);
  const crawlDelayTtlMs = positiveInt('crawlDelayTtlMs', options.crawlDelayTtlMs, 86_400_000);
  const maxCrawlDelayMs = options.maxCrawlDelayMs ?? DEFAULT_MAX_CRAWL_DELAY_MS;
  if (typeof maxCrawlDelayMs !== 'number' || !(maxCrawlDelayMs >= 0)) {
    throw new InvalidOptionError('maxCrawlDelayMs', `expected a number >= 0, got ${String(maxCrawlDelayMs)}`);
  }
  const prefix = options.prefix ?? 'usp:gate:';
  if (typeof prefix !== 'string') throw new InvalidOptionError('prefix', 'expected a string');

  // Commands may wait out a Redis restart (ioredis queues them until it is back) instead of failing.
  const redisOptions = { maxRetriesPerRequest: null, lazyConnect: false } as const;
  const client =
    typeof connection === 'string' ? new Redis(connection, redisOptions) : connection.duplicate(redisOptions);
  const subscriber = client.duplicate(redisOptions);
  client.defineCommand('uspGateAcquire', { numberOfKeys: 3, lua: ACQUIRE_LUA });
  client.defineCommand('uspGateRenew', { numberOfKeys: 1, lua: RENEW_LUA });
  const commands = client as unknown as GateCommands;

  const key = (host: string, part: string) => `${prefix}{${host}}:${part}`;
  const channel = `${prefix}released`;
  const owner = `${process.pid}.${Math.random().toString(36).slice(2, 10)}`;
  let counter = 0;
  let closed = false;

  /** Leases this process holds, by host, renewed on a timer while any are held. */
  const held = new Map<string, Set<string>>();
  const waiters = new Set<Waiter>();
  /** Crawl-delays this process wrote last, so a site walked again does not write it again. */
  const delays = new Map<string, number>();

  const renewTimer = setInterval(
    () => {
      for (const [host, ids] of held) {
        if (ids.size === 0) continue;
        commands.uspGateRenew(key(host, 'leases'), leaseMs, ...ids).catch(() => {
          // Redis unreachable: the lease may lapse and another process may take the slot, which
          // is the price of not blocking the walk on Redis; the next tick tries again.
        });
      }
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  );
  renewTimer.unref();

  subscriber.on('message', (_channel: string, host: string) => {
    // Wake one waiter of the host: one lease was released, so one retry can succeed.
    for (const w of waiters) {
      if (w.host === host) {
        w.retry();
        return;
      }
    }
  });
  const subscribed = subscriber.subscribe(channel);

  function releaser(host: string, id: string): GateRelease {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const ids = held.get(host);
      ids?.delete(id);
      if (ids?.size === 0) held.delete(host);
      if (closed) return;
      client
        .multi()
        .zrem(key(host, 'leases'), id)
        .publish(channel, host)
        .exec()
        .catch(() => {
          // Unreachable: the lease expires on its own after leaseMs.
        });
    };
  }

  async function tryAcquire(host: string, id: string): Promise<number> {
    const [granted, waitMs] = await commands.uspGateAcquire(
      key(host, 'leases'),
      key(host, 'next'),
      key(host, 'delay'),
      id,
      perHost,
      leaseMs,
      maxWaitMs,
    );
    return granted === 1 ? 0 : Math.max(1, waitMs);
  }

  return {
    async acquire(host, signal) {
      if (closed) throw new UspError('USP_CLOSED', 'the politeness gate is closed');
      signal?.throwIfAborted();
      await subscribed;
      const id = `${owner}.${++counter}`;
      for (;;) {
        const waitMs = await tryAcquire(host, id);
        if (waitMs === 0) {
          if (signal?.aborted) {
            releaser(host, id)();
            throw signal.reason;
          }
          let ids = held.get(host);
          if (ids === undefined) {
            ids = new Set();
            held.set(host, ids);
          }
          ids.add(id);
          return releaser(host, id);
        }
        signal?.throwIfAborted();
        // Wait for a release message of this host, or for the time Redis said a retry can succeed.
        await new Promise<void>((resolve, reject) => {
          const finish = () => {
            clearTimeout(timer);
            waiters.delete(waiter);
            signal?.removeEventListener('abort', onAbort);
          };
          const waiter: Waiter = {
            host,
            retry: () => {
              finish();
              resolve();
            },
          };
          const onAbort = () => {
            finish();
            reject(signal?.reason);
          };
          const timer = setTimeout(waiter.retry, waitMs);
          waiters.add(waiter);
          signal?.addEventListener('abort', onAbort, { once: true });
        });
        if (closed) throw new UspError('USP_CLOSED', 'the politeness gate is closed');
      }
    },

    setCrawlDelay(host, delayMs) {
      if (!(delayMs >= 0) || closed) return Promise.resolve();
      const ms = Math.round(Math.min(delayMs, maxCrawlDelayMs));
      // Every walk of a site reads its robots.txt: write only what changed.
      if (delays.get(host) === ms) return Promise.resolve();
      delays.set(host, ms);
      if (delays.size > 10_000) delays.delete(delays.keys().next().value as string);
      const write =
        ms === 0
          ? client.del(key(host, 'delay'))
          : client.set(key(host, 'delay'), String(ms), 'PX', crawlDelayTtlMs);
      return write.then(
        () => {},
        () => {
          // Unreachable: the next walk of the host sets it again.
          delays.delete(host);
        },
      );
    },

    async close() {
      if (closed) return;
      closed = true;
      clearInterval(renewTimer);
      for (const w of waiters) w.retry();
      // Give back what is still held so other processes need not wait for the leases to expire.
      const pending: Promise<unknown>[] = [];
      for (const [host, ids] of held) {
        if (ids.size > 0) pending.push(client.zrem(key(host, 'leases'), ...ids).catch(() => 0));
      }
      held.clear();
      await Promise.all(pending);
      subscriber.disconnect();
      client.disconnect();
    },
  };
}
