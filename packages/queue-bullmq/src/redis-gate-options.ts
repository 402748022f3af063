import { DEFAULT_MAX_CRAWL_DELAY_MS, DEFAULT_PER_HOST } from '@usp-ts/batch';
import { InvalidOptionError, rejectUnknownOptions } from '@usp-ts/core';
import { checkConnection, type RedisConnection } from './connection.js';

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
  /**
   * How long a host's slots stay with this process once its last request to the host ended, for
   * the walk's next request to it (no round trip); then they go back with this process's next ask,
   * or after 500 ms at the latest. 0 gives them back with the next ask. Default 50 ms.
   */
  readonly keepIdleMs?: number;
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
  keepIdleMs: true,
  prefix: true,
} satisfies Record<keyof RedisGateOptions, true>;

/**
 * `keepIdleMs`'s default: how long a host's slots stay with this process after its last request to
 * the host ended. A walk asks for the same host again a moment later (robots.txt read, then the
 * sitemaps; a sitemap parsed, then its children), and a kept slot costs no round trip. While a request of the host is
 * in flight, its other slots stay too (the first ask takes every free slot: a walk soon runs
 * `perHost` requests at once), so a site costs one acquire and one release. Another process
 * refused a slot of the host says so on the "wanted" channel and gets the idle ones at once; the
 * requests in flight never exceed `perHost`.
 */
const KEEP_IDLE_MS = 50;

/**
 * Slots idle for `keepIdleMs` go back to Redis with this process's next ask (in the same write,
 * ioredis pipelining what is sent in one tick), or at the latest after this long. A release on its
 * own timer woke an idle worker three times a site (the timer, the write, the reply) for a command
 * nobody waits on; a process that wants the slots meanwhile says so and gets them at once.
 */
const MAX_LINGER_MS = 500;

/** `RedisGateOptions` checked, with their defaults: what the gate reads. */
export interface RedisGateConfig {
  readonly connection: RedisConnection;
  readonly perHost: number;
  readonly leaseMs: number;
  readonly maxWaitMs: number;
  readonly maxCrawlDelayMs: number;
  readonly crawlDelayTtlMs: number;
  readonly keepIdleMs: number;
  /** The longest idle slots stay here: `keepIdleMs`, or `MAX_LINGER_MS` if that is longer. */
  readonly maxKeepMs: number;
  readonly prefix: string;
}

function positiveInt(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1) return value;
  throw new InvalidOptionError(name, `expected an integer >= 1, got ${String(value)}`);
}

/** Checks the options once, before the gate opens a connection. */
export function resolveRedisGateOptions(options: RedisGateOptions): RedisGateConfig {
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionError('options', 'expected an object');
  }
  rejectUnknownOptions(options, OPTION_KEYS);
  const connection = checkConnection(options.connection);
  const perHost = positiveInt('perHost', options.perHost, DEFAULT_PER_HOST);
  const leaseMs = positiveInt('leaseMs', options.leaseMs, 30_000);
  const maxWaitMs = positiveInt('maxWaitMs', options.maxWaitMs, 1_000);
  const crawlDelayTtlMs = positiveInt('crawlDelayTtlMs', options.crawlDelayTtlMs, 86_400_000);
  const keepIdleMs = options.keepIdleMs ?? KEEP_IDLE_MS;
  if (typeof keepIdleMs !== 'number' || !Number.isSafeInteger(keepIdleMs) || keepIdleMs < 0) {
    throw new InvalidOptionError('keepIdleMs', `expected an integer >= 0, got ${String(keepIdleMs)}`);
  }
  const maxCrawlDelayMs = options.maxCrawlDelayMs ?? DEFAULT_MAX_CRAWL_DELAY_MS;
  if (typeof maxCrawlDelayMs !== 'number' || !(maxCrawlDelayMs >= 0)) {
    throw new InvalidOptionError('maxCrawlDelayMs', `expected a number >= 0, got ${String(maxCrawlDelayMs)}`);
  }
  const prefix = options.prefix ?? 'usp:gate:';
  if (typeof prefix !== 'string') throw new InvalidOptionError('prefix', 'expected a string');
  return {
    connection,
    perHost,
    leaseMs,
    maxWaitMs,
    maxCrawlDelayMs,
    crawlDelayTtlMs,
    keepIdleMs,
    maxKeepMs: Math.max(MAX_LINGER_MS, keepIdleMs),
    prefix,
  };
}
