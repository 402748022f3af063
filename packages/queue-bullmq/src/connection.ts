import { InvalidOptionError, rejectUnknownOptions, UspError } from '@usp-ts/core';
import type { ConnectionOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { ioredis } from './cjs-deps.js';

/** A Redis to use: a `redis://HOST:PORT[/DB]` (or `rediss://`) URL, or an ioredis client you own. */
export type RedisConnection = string | Redis;

/** Checks a connection option early: a client, or a URL with the redis scheme. */
export function checkConnection(connection: unknown, option = 'connection'): RedisConnection {
  if (connection instanceof ioredis.Redis) return connection;
  if (typeof connection === 'string') {
    let url: URL | null = null;
    try {
      url = new URL(connection);
    } catch {
      url = null;
    }
    if (url !== null && (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '') {
      return connection;
    }
  }
  throw new InvalidOptionError(
    option,
    `expected a redis://HOST:PORT[/DB] URL or an ioredis client, got ${JSON.stringify(String(connection))}`,
  );
}

/** What BullMQ's classes take: the caller's client as is, or options that make BullMQ open its own. */
export function bullConnection(connection: RedisConnection): ConnectionOptions {
  return typeof connection === 'string' ? { url: connection } : connection;
}

/** Redis gave no answer to a PING when a run started: a wrong URL, or a server that is down. */
export class RedisUnreachableError extends UspError {
  declare readonly code: 'USP_CONNECTION';
  /** The URL without its user name and password. */
  readonly url: string;
  constructor(url: string, options?: { cause?: unknown }) {
    const why =
      options?.cause instanceof Error && options.cause.message !== '' ? `: ${options.cause.message}` : '';
    super('USP_CONNECTION', `cannot reach Redis at ${url}${why}`, options);
    this.name = 'RedisUnreachableError';
    this.url = url;
  }
}

/** How long the start-up PING may take (connect included). */
export const REACH_TIMEOUT_MS = 5_000;

/** Options of `assertRedisReachable`. */
export interface RedisReachableOptions {
  /** Ends the check (it rejects with the signal's reason). */
  readonly signal?: AbortSignal;
  /** How long the PING may take, connecting included. Default 5,000 ms. */
  readonly timeoutMs?: number;
}

const REACHABLE_OPTION_KEYS = { signal: true, timeoutMs: true } satisfies Record<
  keyof RedisReachableOptions,
  true
>;

/**
 * One PING, on a client of its own that does not retry, before a run starts: rejects with
 * `RedisUnreachableError` (`USP_CONNECTION`) when a `redis://` URL gives no answer in time.
 * BullMQ's clients retry a refused connection for ever, which is right for a Redis restarting
 * mid-run, but a wrong URL or a server that is down would then hang the run, printing a stack
 * each retry. `enqueueSites` runs it; `runWorker` does not (a worker may be started before its
 * Redis, and waits for it): call it first for a start-up check, as `usp worker` does. A client
 * the caller passed in keeps its own policy and is not checked.
 */
export async function assertRedisReachable(
  connection: RedisConnection,
  options: RedisReachableOptions = {},
): Promise<void> {
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionError('options', 'expected an object');
  }
  rejectUnknownOptions(options, REACHABLE_OPTION_KEYS);
  const { signal, timeoutMs = REACH_TIMEOUT_MS } = options;
  if (!(typeof timeoutMs === 'number' && Number.isSafeInteger(timeoutMs) && timeoutMs >= 1)) {
    throw new InvalidOptionError('timeoutMs', `expected an integer >= 1, got ${String(timeoutMs)}`);
  }
  const url = checkConnection(connection);
  if (typeof url !== 'string') return;
  if (signal?.aborted) throw signal.reason;
  const client = new ioredis.Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  // Reported once, by the rejected connect or ping below: with no retry, ioredis rejects with
  // "Connection is closed", and the socket's own error (ECONNREFUSED, ENOTFOUND) says more.
  let socketError: Error | null = null;
  client.on('error', (err: Error) => {
    socketError ??= err;
  });
  const abort = () => client.disconnect();
  signal?.addEventListener('abort', abort, { once: true });
  // A server that accepts and never answers would hold `connect()` (it waits for the ready check).
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    client.disconnect();
  }, timeoutMs);
  try {
    await client.connect();
    await client.ping();
  } catch (cause) {
    if (signal?.aborted) throw signal.reason;
    throw new RedisUnreachableError(withoutCredentials(url), {
      cause: timedOut ? new Error(`no answer within ${timeoutMs} ms`, { cause }) : (socketError ?? cause),
    });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', abort);
    client.disconnect();
  }
}

function withoutCredentials(url: string): string {
  const u = new URL(url);
  u.username = '';
  u.password = '';
  return u.href;
}

/** Socket errors that mean "Redis is not there right now", as ioredis reports them while it reconnects. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** Whether `error` says the connection to Redis is gone (not that a command failed). */
export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  return /^Connection is closed|^Stream isn't writeable|^connect E[A-Z]+/.test(error.message);
}

/** `HOST:PORT` of a connection, for messages (never its password). */
export function redisAddress(connection: RedisConnection): string {
  if (typeof connection === 'string') {
    const u = new URL(connection);
    return `${u.hostname}:${u.port || '6379'}`;
  }
  return `${connection.options.host ?? '127.0.0.1'}:${connection.options.port ?? 6379}`;
}

/** What `onConnection` is told: Redis went away (once), then came back (once). */
export type RedisConnectionState = 'away' | 'back';

/**
 * One report per outage, however many clients see it: a worker holds about five connections (BullMQ's
 * two, the gate's two, the state's), and each used to print a stack for every reconnect attempt
 * (ten `[ioredis] Unhandled error event` lines a restart). The first connection error says "away";
 * a client of its own then reconnects every 500 ms and says "back" once Redis answers.
 */
export class RedisOutage {
  readonly #connection: RedisConnection;
  readonly #on: (state: RedisConnectionState, address: string) => void;
  #probe: Redis | null = null;
  #closed = false;
  constructor(connection: RedisConnection, on: (state: RedisConnectionState, address: string) => void) {
    this.#connection = connection;
    this.#on = on;
  }

  /** Takes an error of any client: `true` when it was a connection error (reported here). */
  report(error: unknown): boolean {
    if (!isConnectionError(error)) return false;
    if (this.#probe === null && !this.#closed) this.#watch();
    return true;
  }

  #watch(): void {
    const options = { maxRetriesPerRequest: null, retryStrategy: () => 500 };
    const probe =
      typeof this.#connection === 'string'
        ? new ioredis.Redis(this.#connection, options)
        : this.#connection.duplicate(options);
    this.#probe = probe;
    const address = redisAddress(this.#connection);
    this.#on('away', address);
    probe.on('error', () => {
      // The outage is reported once, above.
    });
    probe.once('ready', () => {
      probe.disconnect();
      this.#probe = null;
      if (!this.#closed) this.#on('back', address);
    });
  }

  close(): void {
    this.#closed = true;
    this.#probe?.disconnect();
    this.#probe = null;
  }
}
