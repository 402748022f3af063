// The Redis side of the politeness gate as this process sees it: its two connections (commands,
// and the subscriber of the wake-up channels), the Lua scripts of gate-scripts.ts as commands,
// and each host's keys. What the gate does with a grant or a wake-up is redis-gate.ts's.
import type { Redis } from 'ioredis';
import { ioredis } from './cjs-deps.js';
import { ACQUIRE_LUA, RELEASE_LUA, RENEW_LUA } from './gate-scripts.js';
import type { RedisGateConfig } from './redis-gate-options.js';

/** A host's keys in Redis: leases, next, delay, waiting (see gate-scripts.ts). */
export type HostKeys = readonly [string, string, string, string];

/** What a channel message says: a lease of `host` was released, or another process wants one. */
export type GateMessageListener = (kind: 'released' | 'wanted', host: string) => void;

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

export class GateClient {
  readonly #config: RedisGateConfig;
  readonly #client: Redis;
  readonly #subscriber: Redis;
  readonly #commands: GateCommands;
  readonly #channel: string;
  readonly #wantedChannel: string;
  /** This process among those sharing the Redis (lease ids and reservations carry it). */
  readonly #owner = `${process.pid}.${Math.random().toString(36).slice(2, 10)}`;
  #counter = 0;
  /** Settles once the channels are subscribed (or that failed: waiters then retry every maxWaitMs). */
  readonly subscribed: Promise<void>;

  constructor(config: RedisGateConfig, onMessage: GateMessageListener) {
    this.#config = config;
    const { connection, prefix } = config;
    this.#channel = `${prefix}released`;
    this.#wantedChannel = `${prefix}wanted`;
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
    this.#client = client;
    this.#subscriber = subscriber;
    // A restart is waited out (above); the worker's own connections report it, once (`RedisOutage`):
    // without a listener, ioredis printed a stack for each reconnect attempt of each client.
    const quiet = () => {};
    client.on('error', quiet);
    subscriber.on('error', quiet);
    let readyBefore = false;
    subscriber.on('ready', () => {
      if (readyBefore) subscriber.subscribe(this.#channel, this.#wantedChannel).catch(() => {});
      readyBefore = true;
    });
    client.defineCommand('uspGateAcquire', { numberOfKeys: 4, lua: ACQUIRE_LUA });
    client.defineCommand('uspGateRelease', { numberOfKeys: 2, lua: RELEASE_LUA });
    client.defineCommand('uspGateRenew', { numberOfKeys: 1, lua: RENEW_LUA });
    this.#commands = client as unknown as GateCommands;
    subscriber.on('message', (from: string, host: string) => {
      onMessage(from === this.#wantedChannel ? 'wanted' : 'released', host);
    });
    this.subscribed = subscriber.subscribe(this.#channel, this.#wantedChannel).then(
      () => {},
      () => {},
    );
  }

  keysOf(host: string): HostKeys {
    const base = `${this.#config.prefix}{${host}}:`;
    return [`${base}leases`, `${base}next`, `${base}delay`, `${base}waiting`];
  }

  /** A lease id no other ask of any process uses. */
  nextLeaseId(): string {
    return `${this.#owner}.${++this.#counter}`;
  }

  /** Asks for up to `want` leases of `host` (the first is `id`): `[granted, waitMs, delayMs]`. */
  acquire(keys: HostKeys, host: string, id: string, want: number): Promise<[number, number, number]> {
    const { perHost, leaseMs, maxWaitMs } = this.#config;
    return this.#commands.uspGateAcquire(
      keys[0],
      keys[1],
      keys[2],
      keys[3],
      id,
      perHost,
      leaseMs,
      maxWaitMs,
      this.#owner,
      want,
      this.#wantedChannel,
      host,
    );
  }

  /**
   * Gives leases `ids` of `host` back in one call, waking other processes' asks when some wait;
   * with `yieldSlot`, reserves a slot for the process that waits longest. Never rejects.
   */
  release(keys: HostKeys, host: string, ids: readonly string[], yieldSlot: 0 | 1): Promise<unknown> {
    return this.#commands
      .uspGateRelease(
        keys[0],
        keys[3],
        this.#channel,
        host,
        this.#owner,
        this.#config.maxWaitMs,
        yieldSlot,
        ...ids,
      )
      .catch(() => {
        // Unreachable: the lease expires on its own after leaseMs.
      });
  }

  /** Extends leases `ids` by `leaseMs`. */
  renew(keys: HostKeys, ids: Iterable<string>): void {
    this.#commands.uspGateRenew(keys[0], this.#config.leaseMs, ...ids).catch(() => {
      // Redis unreachable: the lease may lapse and another process may take the slot, which
      // is the price of not blocking the walk on Redis; the next tick tries again.
    });
  }

  /** Writes the host's Crawl-delay (0 removes it), remembered for `crawlDelayTtlMs`. */
  writeCrawlDelay(host: string, delayMs: number): Promise<unknown> {
    const delayKey = this.keysOf(host)[2];
    return delayMs === 0
      ? this.#client.del(delayKey)
      : this.#client.set(delayKey, String(delayMs), 'PX', this.#config.crawlDelayTtlMs);
  }

  async close(): Promise<void> {
    this.#subscriber.disconnect();
    await this.#client.quit().catch(() => this.#client.disconnect());
  }
}
