import { Socket } from 'node:net';
import type { buildConnector, Dispatcher, Pool } from 'undici';
import { assertPublicLiteral, guardedLookup } from './address-guard.js';
import type { KeepAlive } from './keep-alive.js';
import { httpOrigin, normalizeHost, type ResolvedOptions } from './options.js';
import { OriginClients } from './origin-clients.js';
import { withParserTiering } from './parser-tiering.js';
import { guardPausedParser } from './paused-parser.js';
import type { Stoppable } from './stop-signal.js';
import { undiciCore, undiciEntry } from './undici.js';

/**
 * How long a request that finds every connection to its host busy waits for one of them before
 * it opens another (see `OriginClients`).
 */
export const CONNECTION_GRACE_MS = 50;

/** undici's keep-alive settings for `keepAliveTimeoutMs`: also the cap on a server's hint. Unset: undici's. */
function keepAliveOptions(o: ResolvedOptions): { keepAliveTimeout?: number; keepAliveMaxTimeout?: number } {
  const ms = o.keepAliveTimeoutMs;
  return ms === undefined ? {} : { keepAliveTimeout: ms, keepAliveMaxTimeout: ms };
}

/**
 * The undici dispatchers of one client: a Client per direct origin (made on first use) and a
 * ProxyAgent per proxy URL, every socket handed to the client's `KeepAlive` and guarded against
 * undici's paused-parser crash, direct connections through the private-network guard.
 */
export class Dispatchers {
  private readonly options: ResolvedOptions;
  private readonly keepAlive: KeepAlive;
  /** Made on first use: a client whose every request goes through a proxy never builds it. */
  private directClients: OriginClients | null = null;
  /** One ProxyAgent per proxy URL in use. */
  private readonly proxyAgents = new Map<string, Dispatcher>();

  constructor(options: ResolvedOptions, keepAlive: KeepAlive) {
    this.options = options;
    this.keepAlive = keepAlive;
  }

  /** A ProxyAgent for one proxy URL. */
  private createProxyDispatcher(uri: string): Dispatcher {
    const o = this.options;
    // Through a proxy the proxy resolves and connects, so the guard checks names before sending.
    const { ProxyAgent, Pool, Client } = undiciEntry();
    const tls = { rejectUnauthorized: o.tlsVerify, timeout: o.connectTimeoutMs, ca: o.tlsCa };
    return new ProxyAgent({
      connections: o.maxConnectionsPerHost,
      headersTimeout: o.headersTimeoutMs,
      bodyTimeout: o.bodyIdleTimeoutMs,
      ...keepAliveOptions(o),
      uri,
      proxyTls: { timeout: o.connectTimeoutMs, ca: o.tlsCa },
      requestTls: tls,
      // undici's own choice of dispatcher per origin, with the tunnelled sockets taken over as
      // they are handed to it (the proxy's CONNECT exchange itself stays undici's).
      factory: (origin, options) => {
        const opts = options as Pool.Options;
        const tunnel = opts.connect;
        const withTunnel =
          typeof tunnel === 'function' ? { ...opts, connect: this.adoptingOnConnect(tunnel) } : opts;
        return opts.connections === 1 ? new Client(origin, withTunnel) : new Pool(origin, withTunnel);
      },
    });
  }

  /**
   * The direct connection a request to `origin` goes on now: a free one, or the first one.
   * `null` when every one is busy: then `waitDirect`.
   */
  direct(origin: string): Dispatcher | null {
    this.directClients ??= this.createDirectClients();
    return this.directClients.now(origin);
  }

  /**
   * Waits for a direct connection to `origin` (see `OriginClients.wait`): a busy one freed
   * within the grace, else a new one. `null` when `signal` stopped the wait.
   */
  waitDirect(origin: string, signal: Stoppable): Promise<Dispatcher | null> {
    this.directClients ??= this.createDirectClients();
    return this.directClients.wait(origin, signal);
  }

  /** A direct request to `origin` is over: its connection may serve one that waits. */
  ended(origin: string): void {
    this.directClients?.ended(origin);
  }

  /** The ProxyAgent of a proxy URL (made on first use). */
  proxied(proxy: string): Dispatcher {
    let d = this.proxyAgents.get(proxy);
    if (d === undefined) {
      d = this.createProxyDispatcher(proxy);
      this.proxyAgents.set(proxy, d);
    }
    return d;
  }

  private createDirectClients(): OriginClients {
    const o = this.options;
    const tls = {
      timeout: o.connectTimeoutMs,
      rejectUnauthorized: o.tlsVerify,
      ca: o.tlsCa,
    };
    const { Client, buildConnector } = undiciCore();
    const clients = (connect: buildConnector.connector): OriginClients => {
      const options = {
        headersTimeout: o.headersTimeoutMs,
        bodyTimeout: o.bodyIdleTimeoutMs,
        ...keepAliveOptions(o),
        connect: withParserTiering(connect),
      };
      return new OriginClients({
        make: (origin) => new Client(origin, options),
        connections: o.maxConnectionsPerHost,
        graceMs: CONNECTION_GRACE_MS,
        timers: this.keepAlive,
      });
    };
    const open = this.adopting(buildConnector(tls));
    if (o.allowPrivateNetworks) return clients(open);
    const guarded = this.adopting(buildConnector({ ...tls, lookup: guardedLookup }));
    const connect: buildConnector.connector = (opts, callback) => {
      if (this.privateAllowed(opts.protocol, opts.hostname, opts.port)) {
        open(opts, callback);
        return;
      }
      // IP literals skip the lookup, so they are checked here; names are checked as they resolve.
      try {
        assertPublicLiteral(opts.hostname);
      } catch (e) {
        callback(e as Error, null);
        return;
      }
      guarded(opts, callback);
    };
    return clients(connect);
  }

  /** Whether this host (or this exact origin) was let through although private. */
  privateAllowed(protocol: string, hostname: string, port: string): boolean {
    const o = this.options;
    if (o.allowPrivateHosts.has(normalizeHost(hostname))) return true;
    if (o.allowPrivateOrigins.size === 0) return false;
    const host = hostname.includes(':') && !hostname.startsWith('[') ? `[${hostname}]` : hostname;
    const origin = httpOrigin(`${protocol}//${host}${port === '' ? '' : `:${port}`}`);
    return origin !== null && o.allowPrivateOrigins.has(origin);
  }

  /** undici's connector returns the socket it creates: it is taken over there, before connecting. */
  private adopting(connect: buildConnector.connector): buildConnector.connector {
    return (opts, callback) => {
      const socket: unknown = connect(opts, callback);
      if (socket instanceof Socket) {
        this.keepAlive.adopt(socket, opts.hostname);
        guardPausedParser(socket);
      }
    };
  }

  /** A connector that hands its socket over only once connected (a proxy tunnel). */
  private adoptingOnConnect(connect: buildConnector.connector): buildConnector.connector {
    return (opts, callback) =>
      connect(opts, (...args) => {
        if (args[1] instanceof Socket) {
          this.keepAlive.adopt(args[1], opts.hostname);
          guardPausedParser(args[1]);
        }
        callback(...args);
      });
  }

  /** Closes every connection of every dispatcher. */
  async destroy(): Promise<void> {
    const all: { destroy(): Promise<void> }[] = [...this.proxyAgents.values()];
    if (this.directClients !== null) all.push(this.directClients);
    await Promise.all(all.map((d) => d.destroy()));
  }
}
