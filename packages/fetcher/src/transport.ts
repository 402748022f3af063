import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { guardedLookup } from './address-guard.js';
import type { ResolvedOptions } from './options.js';

/** One GET as the client asks a transport for it. */
export interface TransportRequest {
  readonly url: URL;
  readonly headers: Record<string, string>;
  /** Ends the request (and its body, once there is one). */
  readonly signal: AbortSignal;
  /** Resolve the host through the address guard (private addresses refused). */
  readonly guarded: boolean;
}

export interface TransportResponse {
  readonly statusCode: number;
  readonly statusText: string | undefined;
  readonly headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>;
  readonly body: Readable;
}

/** How requests reach the server: Node's own HTTP client, or undici through a proxy. */
export interface Transport {
  request(r: TransportRequest): Promise<TransportResponse>;
  /** Lets go of a body nobody wants, keeping the connection when it is small enough to drain. */
  discard(body: Readable): void;
  /** Closes every connection, in use or idle. */
  close(): Promise<void>;
}

/** A body drained to keep its connection stops at this size... */
const DRAIN_LIMIT_BYTES = 64 * 1024;
/** ...or after this long. */
const DRAIN_TIMEOUT_MS = 5_000;
/** Idle pooled connections close after this long (as undici's default keep-alive). */
const IDLE_SOCKET_MS = 4_000;
const noop = () => {};

function timeoutError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * Node's http/https clients on keep-alive agents. Their parser is native and already loaded with
 * Node, where undici's is WebAssembly that V8 compiles (and re-compiles once hot) in every process:
 * for a walk of one or a few sitemaps that compilation cost more CPU than the parse itself.
 */
export class NodeTransport implements Transport {
  readonly #o: ResolvedOptions;
  readonly #http: http.Agent;
  readonly #https: https.Agent;

  constructor(o: ResolvedOptions) {
    this.#o = o;
    const common = { keepAlive: true, maxSockets: o.maxConnectionsPerHost, timeout: IDLE_SOCKET_MS };
    this.#http = new http.Agent(common);
    this.#https = new https.Agent({ ...common, rejectUnauthorized: o.tlsVerify });
  }

  request(r: TransportRequest): Promise<TransportResponse> {
    const o = this.#o;
    return new Promise<TransportResponse>((resolve, reject) => {
      const tls = r.url.protocol === 'https:';
      const host = r.url.hostname;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let settled = false;
      const req = (tls ? https : http).request({
        hostname: host.startsWith('[') ? host.slice(1, -1) : host,
        port: r.url.port === '' ? undefined : Number(r.url.port),
        path: `${r.url.pathname}${r.url.search}`,
        method: 'GET',
        headers: r.headers,
        agent: tls ? this.#https : this.#http,
        signal: r.signal,
        ...(r.guarded ? { lookup: guardedLookup } : {}),
      });
      const fail = (e: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(e);
      };
      const arm = (ms: number, error: () => Error) => {
        clearTimeout(timer);
        timer = setTimeout(() => req.destroy(error()), ms);
      };
      const waitHeaders = () =>
        arm(o.headersTimeoutMs, () =>
          timeoutError(
            'USP_HEADERS_TIMEOUT',
            `Headers timeout: no response within headersTimeoutMs (${o.headersTimeoutMs} ms)`,
          ),
        );
      // After the response, errors reach the body; this only keeps a late one from going unhandled.
      req.on('error', fail);
      req.on('socket', (socket: Socket) => {
        if (req.reusedSocket || !socket.connecting) {
          waitHeaders();
          return;
        }
        arm(o.connectTimeoutMs, () =>
          timeoutError(
            'USP_CONNECT_TIMEOUT',
            `Connect timeout: no connection to ${host} within connectTimeoutMs (${o.connectTimeoutMs} ms)`,
          ),
        );
        socket.once(tls ? 'secureConnect' : 'connect', waitHeaders);
      });
      req.on('response', (res) => {
        if (settled) {
          res.destroy();
          return;
        }
        settled = true;
        clearTimeout(timer);
        resolve({
          statusCode: res.statusCode ?? 0,
          statusText: res.statusMessage,
          headers: res.headers,
          body: res,
        });
      });
      req.end();
    });
  }

  discard(body: Readable): void {
    body.on('error', noop);
    let bytes = 0;
    const timer = setTimeout(() => body.destroy(), DRAIN_TIMEOUT_MS);
    timer.unref();
    body.on('close', () => clearTimeout(timer));
    body.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > DRAIN_LIMIT_BYTES) body.destroy();
    });
    body.resume();
  }

  async close(): Promise<void> {
    this.#http.destroy();
    this.#https.destroy();
  }
}

/**
 * A transport created on first use, for the proxy path: undici (and its WebAssembly parser) is
 * loaded only by clients that set `proxy`.
 */
export class LazyTransport implements Transport {
  readonly #create: () => Promise<Transport>;
  #transport: Promise<Transport> | null = null;
  #closed = false;

  constructor(create: () => Promise<Transport>) {
    this.#create = create;
  }

  async request(r: TransportRequest): Promise<TransportResponse> {
    this.#transport ??= this.#create();
    return (await this.#transport).request(r);
  }

  discard(body: Readable): void {
    // A body exists only once the transport does.
    void this.#transport?.then((t) => t.discard(body));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#transport !== null) await (await this.#transport).close();
  }
}
