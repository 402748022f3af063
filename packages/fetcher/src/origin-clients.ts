import type { Client, Dispatcher } from 'undici';

/**
 * The direct connections of a web client: per origin, up to `connections` undici Clients (one
 * connection each), made as requests need them. undici's Agent makes a Pool per origin, and a Pool
 * starts with a queue of 2,048 slots (16 KB) and relays every connect and disconnect through two
 * more layers of events: a batch walks thousands of hosts with a few requests each, and those were
 * 7 % of the bytes a no-change run allocated. The client's own per-host limit keeps at most
 * `connections` requests in flight to a host, so a request nearly always finds a Client with
 * nothing to do; when it does not (undici frees a connection a moment after its response ended),
 * it waits in the least busy one's queue.
 */
export class OriginClients {
  readonly #origins = new Map<string, Client[]>();
  readonly #make: (origin: string) => Client;
  readonly #connections: number;
  #destroyed = false;

  constructor(make: (origin: string) => Client, connections: number) {
    this.#make = make;
    this.#connections = Math.max(1, connections);
  }

  /** Origins with Clients now (tests). */
  get origins(): number {
    return this.#origins.size;
  }

  /**
   * Whether a request to `origin` now would find none of its Clients free (each with a request,
   * or an answer not yet over): `false` for an origin not seen yet, which has nothing to wait for.
   */
  busy(origin: string): boolean {
    const clients = this.#origins.get(origin);
    if (clients === undefined) return false;
    for (const c of clients) if (c.stats.size === 0) return false;
    return true;
  }

  /** The Client a request to `origin` goes to. */
  for(origin: string): Dispatcher {
    let clients = this.#origins.get(origin);
    if (clients === undefined) {
      clients = [];
      this.#origins.set(origin, clients);
    }
    let least: Client | null = null;
    let leastSize = Number.POSITIVE_INFINITY;
    for (const c of clients) {
      const size = c.stats.size;
      if (size === 0) return c;
      if (size < leastSize) {
        least = c;
        leastSize = size;
      }
    }
    if (least !== null && clients.length >= this.#connections) return least;
    return this.#add(origin, clients);
  }

  #add(origin: string, clients: Client[]): Client {
    const c = this.#make(origin);
    // A connection that could not be made is not tried again by its Client's next request (as in
    // undici's Pool): the Client leaves the list.
    c.on('connectionError', () => {
      const i = clients.indexOf(c);
      if (i >= 0) clients.splice(i, 1);
      this.#forgetIfIdle(origin, clients);
    });
    c.on('disconnect', () => this.#forgetIfIdle(origin, clients));
    clients.push(c);
    return c;
  }

  /**
   * An origin whose Clients are all without a connection and without requests is forgotten (memory
   * stays flat over a run of 100k hosts). Such a Client holds no socket and no timer: it is left
   * to the garbage collector, with no close (which would make an error for each).
   */
  #forgetIfIdle(origin: string, clients: Client[]): void {
    if (this.#origins.get(origin) !== clients) return;
    for (const c of clients) {
      const s = c.stats;
      if (s.connected || s.size > 0) return;
    }
    this.#origins.delete(origin);
  }

  /** Destroys every Client: requests in flight fail, connections close. */
  async destroy(): Promise<void> {
    if (this.#destroyed) return;
    this.#destroyed = true;
    const all = [...this.#origins.values()].flat();
    this.#origins.clear();
    await Promise.all(all.map((c) => c.destroy()));
  }
}
