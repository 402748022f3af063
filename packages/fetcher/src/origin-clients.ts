import type { Client } from 'undici';
import { GLOBAL_TIMERS, type Timers } from './keep-alive.js';
import { onStop, type Stoppable } from './stop-signal.js';

/** A request waiting for one of its origin's connections. */
interface Waiter {
  /** Gets the Client to send on, or `null` when the request stopped waiting (aborted, destroyed). */
  readonly take: (client: Client | null) => void;
  timer: unknown;
  unlink: (() => void) | null;
}

/** An origin's Clients (one connection each) and the requests waiting for one of them, FIFO. */
interface Origin {
  readonly clients: Client[];
  readonly waiters: Waiter[];
  /**
   * Clients handed to a waiter that has not dispatched yet (it does so in its continuation, a
   * microtask later): undici still counts them free, and another request would queue behind it.
   */
  handed: Client[] | null;
}

export interface OriginClientsOptions {
  /** Makes the Client of one more connection to `origin`. */
  readonly make: (origin: string) => Client;
  /** Connections per origin at most. */
  readonly connections: number;
  /** How long a request waits for a busy connection before it opens another one. */
  readonly graceMs: number;
  /** The client's timers (ref-aware: an unref'd client's waits do not hold the process). */
  readonly timers?: Timers;
}

/**
 * The direct connections of a web client: per origin, up to `connections` undici Clients (one
 * connection each), made as requests need them. undici's Agent makes a Pool per origin, and a Pool
 * starts with a queue of 2,048 slots (16 KB) and relays every connect and disconnect through two
 * more layers of events: a batch walks thousands of hosts with a few requests each, and those were
 * 7 % of the bytes a no-change run allocated.
 *
 * A further connection opens lazily: a request that finds every connection of its origin busy
 * waits for one to be free (`ended` says when a request on one is over) and opens another only
 * when none is after `graceMs`. The per-host limit is a limit, not a target: a batch at `--per-host
 * 2` opened two connections a site because a site's second request came while its first was
 * answered (a TCP handshake, ~0.45 ms of CPU, and on https a TLS one, for a request the first
 * connection served a millisecond later); a slow host's second request starts up to `graceMs`
 * later than it would on a connection of its own.
 */
export class OriginClients {
  readonly #origins = new Map<string, Origin>();
  readonly #make: (origin: string) => Client;
  readonly #connections: number;
  readonly #graceMs: number;
  readonly #timers: Timers;
  #destroyed = false;

  constructor(options: OriginClientsOptions) {
    this.#make = options.make;
    this.#connections = Math.max(1, options.connections);
    this.#graceMs = options.graceMs;
    this.#timers = options.timers ?? GLOBAL_TIMERS;
  }

  /** Origins with Clients now (tests). */
  get origins(): number {
    return this.#origins.size;
  }

  /**
   * The Client a request to `origin` goes to now: a free one, or the first of an origin without
   * any. `null` when every one is busy (or requests already wait): then `wait` for one.
   */
  now(origin: string): Client | null {
    let o = this.#origins.get(origin);
    if (o === undefined) {
      o = { clients: [], waiters: [], handed: null };
      this.#origins.set(origin, o);
      return this.#add(origin, o);
    }
    if (o.waiters.length > 0) return null;
    return freeClient(o) ?? (o.clients.length === 0 ? this.#add(origin, o) : null);
  }

  /**
   * Waits for one of `origin`'s connections to be free, for `graceMs` at most; then a new
   * connection when below the limit, else the least busy one (undici queues the request on it).
   * `null` when `signal` stopped the wait.
   */
  wait(origin: string, signal: Stoppable): Promise<Client | null> {
    if (signal.aborted || this.#destroyed) return Promise.resolve(null);
    let o = this.#origins.get(origin);
    if (o === undefined) {
      o = { clients: [], waiters: [], handed: null };
      this.#origins.set(origin, o);
    }
    const origin_ = o;
    return new Promise<Client | null>((resolve) => {
      const waiter: Waiter = {
        take: (client) => {
          this.#timers.clearTimeout(waiter.timer);
          waiter.unlink?.();
          waiter.unlink = null;
          resolve(client);
        },
        timer: null,
        unlink: null,
      };
      origin_.waiters.push(waiter);
      waiter.timer = this.#timers.setTimeout(() => {
        if (!remove(origin_.waiters, waiter)) return;
        this.#hand(origin_, waiter, this.#afterGrace(origin, origin_));
      }, this.#graceMs);
      waiter.unlink = onStop(signal, () => {
        if (remove(origin_.waiters, waiter)) waiter.take(null);
        this.#forgetIfIdle(origin, origin_);
      });
      // A connection may have been freed by a request that ended since the caller asked.
      this.#serve(origin_, origin);
    });
  }

  /**
   * A request to `origin` is over (answered to its end, or failed): its connection may be free
   * for a waiting request. undici counts it free right after the handler's last call returns, so
   * the waiters are served after that.
   */
  ended(origin: string): void {
    const o = this.#origins.get(origin);
    if (o === undefined || o.waiters.length === 0) return;
    queueMicrotask(() => this.#serve(o, origin));
  }

  #serve(o: Origin, origin: string): void {
    while (o.waiters.length > 0) {
      const client = freeClient(o) ?? (o.clients.length === 0 ? this.#add(origin, o) : null);
      if (client === null) return;
      this.#hand(o, o.waiters.shift() as Waiter, client);
    }
  }

  /** Gives `client` to `waiter`, and to nobody else until the waiter has sent on it. */
  #hand(o: Origin, waiter: Waiter, client: Client): void {
    waiter.take(client);
    if (o.handed === null) {
      const handed: Client[] = [];
      o.handed = handed;
      // The waiter sends in its continuation, a few microtasks on (or not at all when it was
      // stopped meanwhile): by the next turn of the loop it has.
      setImmediate(() => {
        if (o.handed === handed) o.handed = null;
      });
    }
    o.handed.push(client);
  }

  /** The grace passed with every connection busy: another one, up to the limit. */
  #afterGrace(origin: string, o: Origin): Client {
    const free = freeClient(o);
    if (free !== null) return free;
    if (o.clients.length < this.#connections) return this.#add(origin, o);
    // Counting the requests just handed a Client, which have not reached it yet.
    const load = (c: Client) => c.stats.size + (o.handed?.filter((h) => h === c).length ?? 0);
    let least = o.clients[0] as Client;
    for (const c of o.clients) if (load(c) < load(least)) least = c;
    return least;
  }

  #add(origin: string, o: Origin): Client {
    const c = this.#make(origin);
    const clients = o.clients;
    // A connection that could not be made is not tried again by its Client's next request (as in
    // undici's Pool): the Client leaves the list.
    c.on('connectionError', () => {
      const i = clients.indexOf(c);
      if (i >= 0) clients.splice(i, 1);
      this.#forgetIfIdle(origin, o);
    });
    c.on('disconnect', () => this.#forgetIfIdle(origin, o));
    clients.push(c);
    return c;
  }

  /**
   * An origin whose Clients are all without a connection and without requests, and which no
   * request waits for, is forgotten (memory stays flat over a run of 100k hosts). Such a Client
   * holds no socket and no timer: it is left to the garbage collector, with no close (which would
   * make an error for each).
   */
  #forgetIfIdle(origin: string, o: Origin): void {
    if (this.#origins.get(origin) !== o || o.waiters.length > 0) return;
    for (const c of o.clients) {
      const s = c.stats;
      if (s.connected || s.size > 0) return;
    }
    this.#origins.delete(origin);
  }

  /** Destroys every Client: requests in flight fail, connections close, waits end with `null`. */
  async destroy(): Promise<void> {
    if (this.#destroyed) return;
    this.#destroyed = true;
    const all: Client[] = [];
    for (const o of this.#origins.values()) {
      all.push(...o.clients);
      for (const w of o.waiters.splice(0)) w.take(null);
    }
    this.#origins.clear();
    await Promise.all(all.map((c) => c.destroy()));
  }
}

/**
 * A Client of the origin with no request (nor an answer not yet over) and not just handed to a
 * waiter, or `null`.
 */
function freeClient(o: Origin): Client | null {
  for (const c of o.clients) if (c.stats.size === 0 && (o.handed === null || !o.handed.includes(c))) return c;
  return null;
}

function remove(waiters: Waiter[], w: Waiter): boolean {
  const i = waiters.indexOf(w);
  if (i < 0) return false;
  waiters.splice(i, 1);
  return true;
}
