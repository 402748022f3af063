import { DEFAULT_MAX_CRAWL_DELAY_MS, type GateRelease, type PolitenessGate } from '@usp-ts/batch';
import { InvalidOptionError, rejectUnknownOptions, UspError } from '@usp-ts/core';
import { ioredis } from './cjs-deps.js';
import { checkConnection, type RedisConnection } from './connection.js';
import { ACQUIRE_LUA, RELEASE_LUA, RENEW_LUA } from './gate-scripts.js';

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

function positiveInt(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1) return value;
  throw new InvalidOptionError(name, `expected an integer >= 1, got ${String(value)}`);
}

/** A request of this process waiting for a slot of its host. */
interface Waiter {
  readonly resolve: (release: GateRelease) => void;
  readonly reject: (reason: unknown) => void;
  readonly signal: AbortSignal | undefined;
  onAbort: (() => void) | null;
}

/** This process's side of one host: its leases, its queue, its attempts at Redis. */
interface LocalHost {
  /** The host's keys in Redis (leases, next, delay, waiting), made once. */
  readonly keys: readonly [string, string, string, string];
  /** Lease ids held (renewed on the timer while the requests run). */
  readonly held: Set<string>;
  /** Requests waiting, in order. */
  readonly queue: Waiter[];
  /** Slots asked of Redis by the asks in flight (an ask may want several: see `pump`). */
  asking: number;
  /** Wakes the asks sleeping on a refusal (a release of this host was published). */
  readonly sleepers: Set<() => void>;
  /** Wake-ups that came while an ask was between its refusal and its sleep: it asks again at once. */
  missed: number;
  /** Leases held with no request of this process on them (see `keepIdleMs`), with the uses they served. */
  readonly idle: Map<string, number>;
  /** When every slot held fell idle (`performance.now()`), or -1: see `keepIdleMs`. */
  idleSince: number;
  /** The host's Crawl-delay as Redis last said (or this process set): slots are handed on only without one. */
  delayMs: number;
}

interface GateCommands {
  uspGateAcquire(
    leases: string,
    next: string,
    delay: string,
    waiting: string,
    leaseId: string,
    perHost: number,
    leaseMs: number,
    maxWaitMs: number,
    owner: string,
    want: number,
    wantedChannel: string,
    host: string,
  ): Promise<[number, number, number]>;
  uspGateRelease(
    leases: string,
    waiting: string,
    channel: string,
    host: string,
    owner: string,
    maxWaitMs: number,
    yieldSlot: 0 | 1,
    ...leaseIds: string[]
  ): Promise<number>;
  uspGateRenew(leases: string, leaseMs: number, ...ids: string[]): Promise<number>;
}

/**
 * How many requests in a row one lease may serve before it goes back to Redis, where another
 * process waiting for the host can get it: a process with a long queue for a host must not keep
 * its slots for ever.
 */
const MAX_HANDOVERS = 16;

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
  const keepIdleMs = options.keepIdleMs ?? KEEP_IDLE_MS;
  if (typeof keepIdleMs !== 'number' || !Number.isSafeInteger(keepIdleMs) || keepIdleMs < 0) {
    throw new InvalidOptionError('keepIdleMs', `expected an integer >= 0, got ${String(keepIdleMs)}`);
  }
  const maxKeepMs = Math.max(MAX_LINGER_MS, keepIdleMs);
  const maxCrawlDelayMs = options.maxCrawlDelayMs ?? DEFAULT_MAX_CRAWL_DELAY_MS;
  if (typeof maxCrawlDelayMs !== 'number' || !(maxCrawlDelayMs >= 0)) {
    throw new InvalidOptionError('maxCrawlDelayMs', `expected a number >= 0, got ${String(maxCrawlDelayMs)}`);
  }
  const prefix = options.prefix ?? 'usp:gate:';
  if (typeof prefix !== 'string') throw new InvalidOptionError('prefix', 'expected a string');

  // Commands may wait out a Redis restart (ioredis queues them until it is back) instead of failing.
  const redisOptions = { maxRetriesPerRequest: null, lazyConnect: false } as const;
  // Commands sent in one tick (idle slots given back with an ask, renewals) go in one write.
  const clientOptions = { ...redisOptions, enableAutoPipelining: true } as const;
  const client =
    typeof connection === 'string'
      ? new ioredis.Redis(connection, clientOptions)
      : connection.duplicate(clientOptions);
  // ioredis subscribes again after a reconnect without handling the reply: a close() before it
  // came (a worker stopping while Redis restarts) was an unhandled rejection, fatal to a process.
  const subscriber = client.duplicate({
    ...redisOptions,
    enableAutoPipelining: false,
    autoResubscribe: false,
  });
  // A restart is waited out (above); the worker's own connections report it, once (`RedisOutage`):
  // without a listener, ioredis printed a stack for each reconnect attempt of each client.
  const quiet = () => {};
  client.on('error', quiet);
  subscriber.on('error', quiet);
  let readyBefore = false;
  subscriber.on('ready', () => {
    if (readyBefore) subscriber.subscribe(channel, wantedChannel).catch(() => {});
    readyBefore = true;
  });
  client.defineCommand('uspGateAcquire', { numberOfKeys: 4, lua: ACQUIRE_LUA });
  client.defineCommand('uspGateRelease', { numberOfKeys: 2, lua: RELEASE_LUA });
  client.defineCommand('uspGateRenew', { numberOfKeys: 1, lua: RENEW_LUA });
  const commands = client as unknown as GateCommands;

  const keysOf = (host: string): LocalHost['keys'] => {
    const base = `${prefix}{${host}}:`;
    return [`${base}leases`, `${base}next`, `${base}delay`, `${base}waiting`];
  };
  const channel = `${prefix}released`;
  const wantedChannel = `${prefix}wanted`;
  const owner = `${process.pid}.${Math.random().toString(36).slice(2, 10)}`;
  let counter = 0;
  let closed = false;

  // A request of this process takes a slot of its host in one of two ways: from Redis (a lease,
  // one round trip, refused while `perHost` leases are out across all processes), or from a
  // request of this process that just ended and had one, when the host has no Crawl-delay. The
  // second is the common case (a site's robots.txt, sitemaps and known paths queue behind each
  // other for the same host) and costs no round trip; the number of slots taken across all
  // processes is the same, so the per-host limit stays exact.
  const hosts = new Map<string, LocalHost>();
  /** Crawl-delays this process wrote last, so a site walked again does not write it again. */
  const delays = new Map<string, number>();

  const hostOf = (host: string): LocalHost => {
    let h = hosts.get(host);
    if (h === undefined) {
      h = {
        keys: keysOf(host),
        held: new Set(),
        queue: [],
        asking: 0,
        sleepers: new Set(),
        missed: 0,
        idle: new Map(),
        idleSince: -1,
        delayMs: delays.get(host) ?? 0,
      };
      hosts.set(host, h);
    }
    return h;
  };
  const forget = (host: string, h: LocalHost): void => {
    if (h.held.size === 0 && h.queue.length === 0 && h.asking === 0 && hosts.get(host) === h)
      hosts.delete(host);
  };

  const renewTimer = setInterval(
    () => {
      for (const h of hosts.values()) {
        if (h.held.size === 0) continue;
        commands.uspGateRenew(h.keys[0], leaseMs, ...h.held).catch(() => {
          // Redis unreachable: the lease may lapse and another process may take the slot, which
          // is the price of not blocking the walk on Redis; the next tick tries again.
        });
      }
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  );
  renewTimer.unref();

  subscriber.on('message', (from: string, host: string) => {
    const h = hosts.get(host);
    if (h === undefined) return;
    if (from === wantedChannel) {
      // Another process was refused a slot of the host: the idle ones go to it.
      if (h.idle.size > 0) giveBackIdle(host, h, 1);
      return;
    }
    // One lease of the host was released: one sleeping ask can succeed now.
    for (const wake of h.sleepers) {
      wake();
      return;
    }
    // The message may overtake the reply of the refused ask it is meant for (another connection).
    if (h.asking > 0) h.missed++;
  });
  // Without the subscription (closed before it was made), waiters still retry every maxWaitMs.
  const subscribed = subscriber.subscribe(channel, wantedChannel).then(
    () => {},
    () => {},
  );

  /**
   * Gives leases `ids` of `host` back to Redis in one call, waking other processes' asks when some
   * wait; with `yieldSlot`, reserves a slot for the process that waits longest.
   */
  function giveBack(host: string, ids: readonly string[], yieldSlot: 0 | 1 = 0): Promise<unknown> {
    const [leases, , , waiting] = hosts.get(host)?.keys ?? keysOf(host);
    // Also after close(): an ask in flight then is granted before close() has its replies.
    return commands
      .uspGateRelease(leases, waiting, channel, host, owner, maxWaitMs, yieldSlot, ...ids)
      .catch(() => {
        // Unreachable: the lease expires on its own after leaseMs.
      });
  }

  /** Hands lease `id` to the first waiter of the host, for its `uses`-th request. */
  function grant(host: string, h: LocalHost, id: string, uses: number): void {
    const w = h.queue.shift()!;
    if (w.onAbort !== null) w.signal?.removeEventListener('abort', w.onAbort);
    w.resolve(releaseOf(host, h, id, uses));
  }

  /** The release of a request that runs on lease `id`, its `uses`-th. */
  function releaseOf(host: string, h: LocalHost, id: string, uses: number): GateRelease {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (closed) return;
      const more = h.queue.length > 0 && h.delayMs === 0 && h.held.has(id);
      if (more && uses < MAX_HANDOVERS) {
        grant(host, h, id, uses + 1);
        return;
      }
      if (!more && h.delayMs === 0 && uses < MAX_HANDOVERS && h.held.has(id)) {
        keep(host, h, id, uses);
        return;
      }
      h.held.delete(id);
      // At the end of a run of handovers, a process that waits for the host gets this slot next
      // (the ask started by `pump` reaches Redis after the release, on the same connection).
      giveBack(host, [id], more ? 1 : 0);
      pump(host, h);
      lingerIfIdle(host, h);
    };
  }

  /** Keeps lease `id` (held, no request on it) for the host's next request. */
  function keep(host: string, h: LocalHost, id: string, uses: number): void {
    h.idle.set(id, uses);
    lingerIfIdle(host, h);
  }

  /** Hosts whose slots here are all idle, in the order they fell idle. */
  const lingering = new Map<string, LocalHost>();
  let lingerTimer: ReturnType<typeof setTimeout> | null = null;

  /**
   * Once no request of the host is in flight here, its idle slots go back when they have been
   * idle `keepIdleMs`, with the next ask or on the shared timer (`MAX_LINGER_MS`).
   */
  function lingerIfIdle(host: string, h: LocalHost): void {
    if (h.idle.size === 0 || h.idleSince >= 0) return;
    if (h.idle.size < h.held.size && h.delayMs === 0) return;
    h.idleSince = performance.now();
    lingering.set(host, h);
    if (lingerTimer === null) {
      lingerTimer = setTimeout(onLingerTimer, maxKeepMs);
      lingerTimer.unref?.();
    }
  }

  function endLinger(host: string, h: LocalHost): void {
    if (h.idleSince < 0) return;
    h.idleSince = -1;
    lingering.delete(host);
  }

  /** Gives back the slots of every host idle for at least `minIdleMs`. */
  function giveBackLingering(minIdleMs: number): void {
    if (lingering.size === 0) return;
    const before = performance.now() - minIdleMs;
    for (const [host, h] of lingering) {
      if (h.idleSince > before) break;
      giveBackIdle(host, h, 0);
    }
  }

  function onLingerTimer(): void {
    lingerTimer = null;
    giveBackLingering(keepIdleMs);
    if (lingering.size === 0 || closed) return;
    const oldest = lingering.values().next().value as LocalHost;
    const due = Math.max(keepIdleMs, oldest.idleSince + maxKeepMs - performance.now());
    lingerTimer = setTimeout(onLingerTimer, due);
    lingerTimer.unref?.();
  }

  /**
   * Gives every idle slot of the host back in one call (a walk's slots fall idle together at its
   * end); with `yieldSlot`, one is reserved for the process that waits longest.
   */
  function giveBackIdle(host: string, h: LocalHost, yieldSlot: 0 | 1): void {
    endLinger(host, h);
    if (h.idle.size === 0) return;
    const ids = [...h.idle.keys()];
    h.idle.clear();
    for (const id of ids) h.held.delete(id);
    giveBack(host, ids, yieldSlot);
    forget(host, h);
  }

  /** Takes a lease kept idle for the host's next request, if any, and ends the host's linger. */
  function takeIdle(host: string, h: LocalHost): { id: string; uses: number } | null {
    for (const [id, uses] of h.idle) {
      endLinger(host, h);
      h.idle.delete(id);
      return { id, uses };
    }
    return null;
  }

  /** Starts as many asks to Redis as there are waiters without a slot, up to the free slots. */
  function pump(host: string, h: LocalHost): void {
    if (h.delayMs > 0) {
      // Slots are not handed on under a Crawl-delay (each request start is spaced by Redis).
      if (h.idle.size > 0) giveBackIdle(host, h, 0);
    } else {
      while (h.queue.length > 0) {
        const kept = takeIdle(host, h);
        if (kept === null) break;
        grant(host, h, kept.id, kept.uses + 1);
      }
    }
    while (h.queue.length > h.asking && h.held.size + h.asking < perHost && !closed) {
      // Without a Crawl-delay, the first ask takes every free slot: the walk's next requests to
      // the host follow soon, and each slot taken now is a round trip saved then.
      const want = h.delayMs === 0 ? perHost - h.held.size - h.asking : 1;
      h.asking += want;
      void ask(host, h, want);
    }
    forget(host, h);
  }

  /**
   * Asks Redis for up to `want` leases until some are granted or nobody of this process waits for
   * them any more.
   */
  async function ask(host: string, h: LocalHost, want: number): Promise<void> {
    const id = `${owner}.${++counter}`;
    const [leases, next, delay, waiting] = h.keys;
    try {
      await subscribed;
      for (;;) {
        // Slots long idle go back in the same write as this ask.
        giveBackLingering(keepIdleMs);
        const [granted, waitMs, delayMs] = await commands.uspGateAcquire(
          leases,
          next,
          delay,
          waiting,
          id,
          perHost,
          leaseMs,
          maxWaitMs,
          owner,
          want,
          wantedChannel,
          host,
        );
        h.delayMs = delayMs;
        if (granted > 0) {
          h.asking -= want;
          h.missed = 0;
          const ids = [id];
          for (let k = 2; k <= granted; k++) ids.push(`${id}+${k}`);
          if (closed) {
            giveBack(host, ids);
          } else {
            for (const lease of ids) {
              h.held.add(lease);
              // A slot nobody here waits for yet (every waiter gave up, or taken ahead) is kept.
              if (h.queue.length > 0) grant(host, h, lease, 1);
              else keep(host, h, lease, 0);
            }
          }
          pump(host, h);
          return;
        }
        if (h.queue.length <= h.asking - want || closed) break;
        if (h.missed > 0) {
          h.missed--;
          continue;
        }
        // Wait for a release of this host, or for the time Redis said a retry can succeed.
        await new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            h.sleepers.delete(wake);
            resolve();
          };
          const timer = setTimeout(wake, Math.max(1, waitMs));
          h.sleepers.add(wake);
        });
        if (h.queue.length <= h.asking - want || closed) break;
      }
    } catch (error) {
      // Redis refused the script (not a connection loss: ioredis waits those out): the waiters fail.
      h.asking -= want;
      for (const w of h.queue.splice(0)) {
        if (w.onAbort !== null) w.signal?.removeEventListener('abort', w.onAbort);
        w.reject(error);
      }
      forget(host, h);
      return;
    }
    h.asking -= want;
    if (closed) {
      for (const w of h.queue.splice(0))
        w.reject(new UspError('USP_CLOSED', 'the politeness gate is closed'));
    }
    forget(host, h);
  }

  return {
    acquire(host, signal) {
      if (closed) return Promise.reject(new UspError('USP_CLOSED', 'the politeness gate is closed'));
      if (signal?.aborted) return Promise.reject(signal.reason);
      const h = hostOf(host);
      // A slot this process keeps idle, nobody of it waiting first: the request takes it at once.
      // Most of a walk's requests come this way (robots.txt, then each sitemap after the one
      // before), and a waiter's promise, its abort listener and the hand-over through `pump`
      // were the gate's own CPU per request (bench:queue), as the local gate's fast path avoids.
      if (h.queue.length === 0 && h.delayMs === 0) {
        const kept = takeIdle(host, h);
        if (kept !== null) return Promise.resolve(releaseOf(host, h, kept.id, kept.uses + 1));
      }
      return new Promise<GateRelease>((resolve, reject) => {
        const w: Waiter = { resolve, reject, signal, onAbort: null };
        if (signal !== undefined) {
          w.onAbort = () => {
            const i = h.queue.indexOf(w);
            if (i >= 0) h.queue.splice(i, 1);
            reject(signal.reason);
            forget(host, h);
          };
          signal.addEventListener('abort', w.onAbort, { once: true });
        }
        h.queue.push(w);
        pump(host, h);
      });
    },

    setCrawlDelay(host, delayMs) {
      if (!(delayMs >= 0) || closed) return Promise.resolve();
      const ms = Math.round(Math.min(delayMs, maxCrawlDelayMs));
      const h = hosts.get(host);
      if (h !== undefined) {
        h.delayMs = ms;
        // Kept slots are not handed on under a Crawl-delay.
        if (ms > 0) giveBackIdle(host, h, 0);
      }
      // Every walk of a site reads its robots.txt: write only what changed.
      if (delays.get(host) === ms) return Promise.resolve();
      delays.set(host, ms);
      if (delays.size > 10_000) delays.delete(delays.keys().next().value as string);
      const delayKey = (h?.keys ?? keysOf(host))[2];
      const write = ms === 0 ? client.del(delayKey) : client.set(delayKey, String(ms), 'PX', crawlDelayTtlMs);
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
      if (lingerTimer !== null) clearTimeout(lingerTimer);
      lingering.clear();
      // Give back what is still held so other processes need not wait for the leases to expire.
      const pending: Promise<unknown>[] = [];
      for (const [host, h] of hosts) {
        for (const wake of h.sleepers) wake();
        for (const w of h.queue.splice(0)) {
          if (w.onAbort !== null) w.signal?.removeEventListener('abort', w.onAbort);
          w.reject(new UspError('USP_CLOSED', 'the politeness gate is closed'));
        }
        if (h.held.size > 0) pending.push(giveBack(host, [...h.held]));
        h.held.clear();
      }
      hosts.clear();
      await Promise.all(pending);
      subscriber.disconnect();
      await client.quit().catch(() => client.disconnect());
    },
  };
}
