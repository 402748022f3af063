import { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import {
  headerLookup,
  type WebClient,
  type WebErrorResponse,
  type WebNotModifiedResponse,
  type WebRequestOptions,
  type WebResponse,
  type WebSuccessResponse,
} from '@usp-ts/core';
import type { buildConnector, Dispatcher, Pool } from 'undici';
import { assertPublicHost, assertPublicLiteral, guardedLookup } from './address-guard.js';
import { ResponseBody } from './body.js';
import { classifyNetworkError } from './classify.js';
import { parseContentEncoding } from './content-coding.js';
import { BlockedAddressError, WebAbortError, WebBodyError, type WebErrorCode } from './errors.js';
import { type HopRequestOptions, type HopResponse, hopRequest } from './hop-request.js';
import { KeepAlive } from './keep-alive.js';
import { HostSpacing, KeyedSemaphore, type Release, Semaphore, sleep } from './limiter.js';
import {
  httpOrigin,
  normalizeHost,
  type ResolvedOptions,
  type RetryInfo,
  resolveOptions,
  type WebClientOptions,
} from './options.js';
import { OriginClients } from './origin-clients.js';
import { withParserTiering } from './parser-tiering.js';
import { guardPausedParser } from './paused-parser.js';
import { isProxyFailure, proxyName } from './proxy-failure.js';
import { proxyFor } from './proxy-routes.js';
import { backoffDelay, parseRetryAfter, RETRYABLE_STATUSES } from './retry.js';
import { onStop, StopSignal } from './stop-signal.js';
import { TimeBudget } from './time-budget.js';
import { nodeStatusCodes, undiciCore, undiciEntry } from './undici.js';
import { DEFAULT_USER_AGENT } from './version.js';

/** An error response with what the fetcher knows beyond core's interface. */
export interface FetchErrorResponse extends WebErrorResponse {
  readonly code: WebErrorCode;
  /** Attempts made, the first included. */
  readonly attempts: number;
  /** The server's `Retry-After`, in ms, when it sent one. */
  readonly retryAfterMs?: number;
  /**
   * The proxy (`scheme://host:port`, no credentials) when the failure was the proxy's rather
   * than the site's: unreachable, or refusing the tunnel. The message then starts `Proxy ... failed`.
   */
  readonly proxy?: string;
}

/** The web client `createWebClient` returns. */
export interface FetcherWebClient extends WebClient {
  get(url: string, options?: WebRequestOptions): Promise<WebResponse>;
  /**
   * Aborts what is in flight (pending `get`s resolve to a `closed` error, bodies being read
   * throw `closed`) and closes every connection. Later `get`s answer `closed`.
   */
  close(): Promise<void>;
  /** The options in force, defaults filled in. */
  readonly options: ResolvedOptions;
  /**
   * Lets the client's sockets and timers keep the process alive again (the default): a socket
   * holds the event loop while it has requests, as in plain undici; an idle one does not.
   */
  ref(): void;
  /**
   * From now on no socket or timer of this client keeps the process alive, in flight or not (a
   * response body left half-read included): the process exits when nothing else holds it.
   * Requests go on as long as something else does. For a caller that waits on the client only
   * at times (a walk between two `next()` calls). A DNS lookup under way still holds the
   * process until it answers, and so does a `proxy`'s CONNECT exchange.
   */
  unref(): void;
  /**
   * Closes the idle connections to these host names now, rather than after `keepAliveTimeoutMs`
   * (connections with a request on them are left alone; a later request opens a new one). For a
   * caller that knows it is done with a host for a while, such as a batch whose site ended.
   */
  closeIdle(hosts: Iterable<string>): void;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Shared by every request without a redirect: read only, a redirect makes a new list. */
const NO_REDIRECTS: readonly string[] = [];
/** A drained error or redirect body up to this size keeps its connection for reuse. */
const DRAIN_LIMIT_BYTES = 64 * 1024;
const DRAIN_TIMEOUT_MS = 5_000;
/** zlib output chunk: Node's 16 KiB default is two to three times slower on sitemap-sized bodies. */
const ZLIB_CHUNK_BYTES = 128 * 1024;
const noop = () => {};

/** undici's keep-alive settings for `keepAliveTimeoutMs`: also the cap on a server's hint. Unset: undici's. */
function keepAliveOptions(o: ResolvedOptions): { keepAliveTimeout?: number; keepAliveMaxTimeout?: number } {
  const ms = o.keepAliveTimeoutMs;
  return ms === undefined ? {} : { keepAliveTimeout: ms, keepAliveMaxTimeout: ms };
}

/** Creates a web client on shared undici dispatchers. Call `close()` when done with it. */
export function createWebClient(options: WebClientOptions = {}): FetcherWebClient {
  return new UndiciWebClient(resolveOptions(options, DEFAULT_USER_AGENT));
}

/** Thrown inside a `get` when its life signal fired; `get` turns it into the right outcome. */
class Stop extends Error {}

/** One request of an attempt: the first, or one after a redirect. */
interface Hop {
  /** The URL asked for now. */
  readonly current: URL;
  /** The attempt's first URL: the caller's headers go to its origin only. */
  readonly start: URL;
  /** The URL the caller asked for, which error responses name. */
  readonly requestedUrl: string;
  /** The URLs redirected from so far. */
  readonly redirects: readonly string[];
  readonly request: WebRequestOptions;
  /** Aborted when the caller or the client gives up. */
  readonly life: StopSignal;
  /** The attempt's time budget, shared by its hops and the body. */
  readonly budget: TimeBudget;
  readonly attempt: number;
}

/** A 2xx answer to a hop, which becomes the response with its body. */
interface HopSuccess {
  readonly data: HopResponse & { readonly body: Readable };
  readonly current: URL;
  readonly redirects: readonly string[];
  readonly statusText: string;
  readonly request: WebRequestOptions;
  /** Aborts the request, and with it the body's socket. */
  readonly requestCtl: StopSignal;
  readonly budget: TimeBudget;
  /** Frees the hop's host and global slots once the body is done. */
  readonly release: Release;
}

type HopResult =
  | { readonly kind: 'final'; readonly response: WebResponse }
  | {
      readonly kind: 'redirect';
      readonly location: string;
      readonly status: number;
      readonly statusText: string;
    };

function reasonPhrase(status: number, fromServer: string | undefined): string {
  const server = fromServer?.trim();
  return server ? server : (nodeStatusCodes()[status] ?? '');
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/** Decodes percent-encoded unreserved characters (RFC 3986 6.2.2.2), leaving every other escape as sent. */
function decodeUnreserved(s: string): string {
  return s.replace(/%([0-9A-Fa-f]{2})/g, (match, hex: string) => {
    const c = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(c) ? c : match;
  });
}

/**
 * An absolute http(s) URL in the form it is requested and reported in: WHATWG-parsed (dot
 * segments removed, non-ASCII percent-encoded) and `%7E`-style escapes of unreserved characters
 * decoded, as python-requests does, so final URLs match usp's. Fragments never go on the wire.
 */
function parseHttpUrl(url: string): URL | null {
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    u.hash = '';
    if (u.pathname.includes('%')) u.pathname = decodeUnreserved(u.pathname);
    if (u.search.includes('%')) u.search = decodeUnreserved(u.search);
    return u;
  } catch {
    return null;
  }
}

function firstHeader(v: string | string[] | undefined): string | null {
  if (v === undefined) return null;
  return Array.isArray(v) ? (v[0] ?? null) : v;
}

/** Resolves after the event loop's next check phase (after the immediates already queued). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Lets go of a body we do not want, keeping the connection when it is small enough to drain. */
function discard(body: Dispatcher.ResponseData['body'], status: number): void {
  body.on('error', noop);
  // A 304 has no body (the parser knows): nothing to limit or time, so no dump (a promise, a
  // timer and three listeners), one less per 304 of a no-change batch run.
  if (status === 304) {
    body.resume();
    return;
  }
  body.dump({ limit: DRAIN_LIMIT_BYTES, signal: AbortSignal.timeout(DRAIN_TIMEOUT_MS) }).catch(noop);
}

class UndiciWebClient implements FetcherWebClient {
  readonly options: ResolvedOptions;
  /** Made on first use: a client whose every request goes through a proxy never builds it. */
  private direct: OriginClients | null = null;
  /** One ProxyAgent per proxy URL in use. */
  private readonly proxied = new Map<string, Dispatcher>();
  // undici is loaded with the first client, not with this module: a program that only parses
  // documents (or imports the meta-package for its types) never pays for the HTTP stack.
  private readonly undici = undiciCore();
  private readonly global: Semaphore;
  private readonly perHost: KeyedSemaphore;
  private readonly spacing: HostSpacing;
  private readonly keepAlive = new KeepAlive();
  /** The headers every request carries, to any origin. */
  private readonly baseHeaders: Readonly<Record<string, string>>;
  /** The headers every request to the origin asked for carries, made once (keys lower-case). */
  private readonly originHeaders: Readonly<Record<string, string>>;
  /** Everything that must stop when the client closes. */
  private readonly closers = new Set<() => void>();
  private closed = false;

  constructor(options: ResolvedOptions) {
    this.options = options;
    this.global = new Semaphore(options.maxConcurrentRequests);
    this.perHost = new KeyedSemaphore(options.maxConnectionsPerHost);
    this.spacing = new HostSpacing(options.perHostDelayMs, this.keepAlive);
    this.baseHeaders = { 'user-agent': options.userAgent, 'accept-encoding': 'gzip, deflate, br' };
    const h: Record<string, string> = { ...this.baseHeaders };
    for (const [k, v] of Object.entries(options.headers)) h[k.toLowerCase()] = v;
    this.originHeaders = h;
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

  /** The dispatcher of a request: direct, or the ProxyAgent of its proxy (made on first use). */
  private dispatcherFor(proxy: string | undefined, origin: string): Dispatcher {
    if (proxy === undefined) {
      this.direct ??= this.createDirectClients();
      return this.direct.for(origin);
    }
    let d = this.proxied.get(proxy);
    if (d === undefined) {
      d = this.createProxyDispatcher(proxy);
      this.proxied.set(proxy, d);
    }
    return d;
  }

  private createDirectClients(): OriginClients {
    const o = this.options;
    const tls = { timeout: o.connectTimeoutMs, rejectUnauthorized: o.tlsVerify, ca: o.tlsCa };
    const { Client, buildConnector } = undiciCore();
    const clients = (connect: buildConnector.connector): OriginClients => {
      const options = {
        headersTimeout: o.headersTimeoutMs,
        bodyTimeout: o.bodyIdleTimeoutMs,
        ...keepAliveOptions(o),
        connect: withParserTiering(connect),
      };
      return new OriginClients((origin) => new Client(origin, options), o.maxConnectionsPerHost);
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
  private privateAllowed(protocol: string, hostname: string, port: string): boolean {
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

  ref(): void {
    this.keepAlive.ref();
  }

  closeIdle(hosts: Iterable<string>): void {
    this.keepAlive.closeIdle(hosts);
  }

  unref(): void {
    this.keepAlive.unref();
  }

  async get(url: string, request: WebRequestOptions = {}): Promise<WebResponse> {
    const signal = request.signal;
    if (signal?.aborted) throw new WebAbortError(url, signal.reason);
    if (this.closed) return this.closedResponse(url, 0);
    const start = parseHttpUrl(url);
    if (start === null)
      return errorResponse(url, null, 'invalid-url', `Not an absolute http(s) URL: ${url}`, false, 0);

    // One signal for the whole get: the caller's abort and the client's close both end it.
    const life = new StopSignal();
    const onAbort = () => life.abort(signal?.reason);
    const onClose = () => life.abort(new Error('closed'));
    // Not `{ once: true }`: a signal aborts once anyway, the listener goes in `finally`, and Node's
    // EventTarget makes a once-listener cost about three times as much to add and remove (one
    // per request of a batch walk).
    signal?.addEventListener('abort', onAbort);
    this.closers.add(onClose);
    let attempt = 0;
    try {
      for (attempt = 1; ; attempt++) {
        const res = await this.attempt(start, url, request, life, attempt);
        if (res.kind !== 'error') return res;
        const err = res as FetchErrorResponse;
        const o = this.options;
        // No response at all: a host that refused or stayed silent twice rarely answers a third time.
        const maxAttempts = err.status === null ? Math.min(o.networkAttempts, o.retries) : o.retries;
        if (!err.retryable || attempt >= maxAttempts) return err;
        // The caller (a walk's breaker) may have given up on this origin while we waited.
        if (request.shouldRetry !== undefined && !request.shouldRetry(err)) return err;
        const backoff = backoffDelay(attempt, o.baseDelayMs, o.maxDelayMs);
        let delay = backoff;
        if (err.retryAfterMs !== undefined) {
          // Waiting longer than the cap would stall a walk; giving up now leaves the choice to the caller.
          if (err.retryAfterMs > o.maxRetryAfterMs) return err;
          // `Retry-After: 0` from a server that is overloaded must not turn retries into a burst.
          delay = Math.max(err.retryAfterMs, backoff);
        }
        const info: RetryInfo = {
          url,
          attempt,
          maxAttempts,
          code: err.code,
          status: err.status,
          reason: err.message,
          delayMs: delay,
        };
        if (o.onRetry !== undefined) {
          try {
            o.onRetry(info);
          } catch {
            // A logging hook that throws must not change what the request does.
          }
        }
        await sleep(delay, life, this.keepAlive);
        if (request.shouldRetry !== undefined && !request.shouldRetry(err)) return err;
      }
    } catch (e) {
      if (signal?.aborted) throw new WebAbortError(url, signal.reason);
      if (this.closed) return this.closedResponse(url, attempt);
      throw e;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.closers.delete(onClose);
    }
  }

  /** One attempt: the request and every redirect hop, under one time budget. */
  private async attempt(
    start: URL,
    requestedUrl: string,
    request: WebRequestOptions,
    life: StopSignal,
    attempt: number,
  ): Promise<WebResponse> {
    const budget = new TimeBudget(this.options.requestTimeoutMs, this.keepAlive);
    // Made at the first redirect: most requests have none.
    let redirects: readonly string[] = NO_REDIRECTS;
    let seen: Set<string> | null = null;
    let current = start;
    while (true) {
      const hop = await this.hop({ current, start, requestedUrl, redirects, request, life, budget, attempt });
      if (hop.kind === 'final') return hop.response;
      seen ??= new Set<string>([start.href]);
      const next = parseHttpUrl(hop.location);
      if (next === null) {
        return errorResponse(
          requestedUrl,
          hop.status,
          'invalid-url',
          `Redirect from ${current.href} to an unsupported URL: ${hop.location}`,
          false,
          attempt,
        );
      }
      if (seen.has(next.href)) {
        return errorResponse(
          requestedUrl,
          hop.status,
          'redirect-limit',
          `Redirect loop: ${current.href} redirects back to ${next.href}`,
          false,
          attempt,
        );
      }
      if (redirects.length >= this.options.maxRedirects) {
        return errorResponse(
          requestedUrl,
          hop.status,
          'redirect-limit',
          `Too many redirects: more than ${this.options.maxRedirects} from ${requestedUrl}`,
          false,
          attempt,
        );
      }
      redirects = [...redirects, current.href];
      seen.add(next.href);
      current = next;
    }
  }

  private requestHeaders(current: URL, start: URL, request: WebRequestOptions): Record<string, string> {
    // Headers the caller set are meant for the origin asked for (a cookie, an API key): like
    // `Authorization` in fetch, none of them follows a redirect to another origin.
    let h: Record<string, string>;
    if (current === start || current.origin === start.origin) {
      // Object.assign, not a spread: V8 gives each object made by `{ ...x }` a map of its own,
      // and undici's reads of the headers would miss their caches on every request.
      h = Object.assign({}, this.originHeaders);
      if (request.headers !== undefined)
        for (const [k, v] of Object.entries(request.headers)) h[k.toLowerCase()] = v;
    } else {
      h = Object.assign({}, this.baseHeaders);
    }
    if (request.ifNoneMatch !== undefined) h['if-none-match'] = request.ifNoneMatch;
    if (request.ifModifiedSince !== undefined) h['if-modified-since'] = request.ifModifiedSince;
    return h;
  }

  /**
   * The host's and the global slot at once when both are free and no spacing applies: the usual
   * case (a batch's gate keeps within both limits), and no promise or microtask on it.
   */
  private takeFreeSlots(host: string): Release | null {
    if (!this.spacing.none) return null;
    const releaseHost = this.perHost.tryAcquire(host);
    if (releaseHost === null) return null;
    const releaseGlobal = this.global.tryAcquire();
    if (releaseGlobal === null) {
      releaseHost();
      return null;
    }
    return releaseBoth(releaseGlobal, releaseHost);
  }

  private async acquireSlots(host: string, life: StopSignal): Promise<Release> {
    const stop = () => new Stop();
    const releaseHost = await this.perHost.acquire(host, life).catch((e) => {
      throw life.aborted ? stop() : e;
    });
    try {
      await this.spacing.wait(host, life);
      return releaseBoth(await this.global.acquire(life), releaseHost);
    } catch (e) {
      releaseHost();
      throw life.aborted ? stop() : e;
    }
  }

  private async hop(hop: Hop): Promise<HopResult> {
    const { current, start, requestedUrl, redirects, request, life, budget, attempt } = hop;
    const o = this.options;
    const proxy = proxyFor(current, o.proxy);
    if (!o.allowPrivateNetworks && !this.privateAllowed(current.protocol, current.hostname, current.port)) {
      try {
        if (proxy !== undefined) await assertPublicHost(current.hostname);
        else assertPublicLiteral(current.hostname);
      } catch (e) {
        if (!(e instanceof BlockedAddressError)) throw e;
        return {
          kind: 'final',
          response: errorResponse(requestedUrl, null, 'blocked', e.message, false, attempt),
        };
      }
    }
    const hostname = current.hostname;
    const release = this.takeFreeSlots(hostname) ?? (await this.acquireSlots(hostname, life));
    // Built by the getter on every read: once per hop.
    const origin = current.origin;
    // undici gives a kept-alive socket back to its pool one event-loop turn after the response
    // ends (in case the server closes it after all); a request sent sooner to the same host
    // opens another connection. Waiting for that turn, a no-change batch run of 200 sites made
    // 200 connections instead of 393: a TCP handshake (and on https a TLS one) saved per site.
    // A direct origin with no Client yet has no socket to give back (a batch site's first
    // request): no turn to wait for.
    if (proxy !== undefined || this.direct?.has(origin) === true) await nextTurn();
    if (life.aborted) {
      release();
      throw new Stop();
    }
    // undici takes an EventEmitter as the request's signal: see StopSignal.
    const requestCtl = new StopSignal();
    const unlinkLife = onStop(life, () => requestCtl.abort(life.reason));
    let timedOut = false;
    budget.run(() => {
      timedOut = true;
      requestCtl.abort(new Error('requestTimeoutMs passed'));
    });
    let data: HopResponse;
    try {
      data = await this.send(this.dispatcherFor(proxy, origin), {
        origin,
        path: `${current.pathname}${current.search}`,
        headers: this.requestHeaders(current, start, request),
        signal: requestCtl,
        drainLimitBytes: DRAIN_LIMIT_BYTES,
        drainTimeoutMs: DRAIN_TIMEOUT_MS,
      });
    } catch (e) {
      budget.pause();
      unlinkLife();
      release();
      if (life.aborted) throw new Stop();
      if (timedOut) {
        const message = `Request timed out: requestTimeoutMs (${o.requestTimeoutMs} ms) passed before the response`;
        return {
          kind: 'final',
          response: errorResponse(requestedUrl, null, 'timeout', message, true, attempt),
        };
      }
      const c = classifyNetworkError(e);
      if (proxy !== undefined && isProxyFailure(e, proxy)) {
        const name = proxyName(proxy);
        const message = `Proxy ${name} failed: ${c.message}`;
        const response = errorResponse(requestedUrl, null, c.code, message, c.retryable, attempt);
        (response as { proxy?: string }).proxy = name;
        return { kind: 'final', response };
      }
      return {
        kind: 'final',
        response: errorResponse(requestedUrl, null, c.code, c.message, c.retryable, attempt),
      };
    }
    budget.pause();
    unlinkLife();
    const { statusCode: status, headers } = data;
    const statusText = reasonPhrase(status, data.statusText);

    if (status >= 200 && status < 300 && data.body !== null) {
      return {
        kind: 'final',
        response: this.success({
          data: data as HopSuccess['data'],
          current,
          redirects,
          statusText,
          request,
          requestCtl,
          budget,
          release,
        }),
      };
    }
    release();
    const location = firstHeader(headers.location);
    if (REDIRECT_STATUSES.has(status) && location !== null) {
      let resolved: string;
      try {
        resolved = new URL(location, current).href;
      } catch {
        resolved = location;
      }
      return { kind: 'redirect', location: resolved, status, statusText };
    }
    if (status === 304) {
      const notModified: WebNotModifiedResponse = {
        kind: 'not-modified',
        url: current.href,
        headers: headerLookup(headers),
      };
      return { kind: 'final', response: notModified };
    }
    const retryAfterMs = parseRetryAfter(firstHeader(headers['retry-after'])) ?? undefined;
    const response = errorResponse(
      requestedUrl,
      status,
      'http-status',
      `${status} ${statusText}`.trim(),
      RETRYABLE_STATUSES.has(status),
      attempt,
    );
    if (retryAfterMs !== undefined) (response as { retryAfterMs?: number }).retryAfterMs = retryAfterMs;
    return { kind: 'final', response };
  }

  /**
   * One GET: through `hopRequest` (no stream for an answer whose body is not read), or undici's
   * `request` when its files moved.
   */
  private send(dispatcher: Dispatcher, options: HopRequestOptions): Promise<HopResponse> {
    const hop = this.undici.hop;
    // Not an async function: the usual path hands hopRequest's promise on as it is.
    if (hop !== null) return hopRequest(dispatcher, hop, options);
    return this.sendByRequest(dispatcher, options);
  }

  private async sendByRequest(dispatcher: Dispatcher, options: HopRequestOptions): Promise<HopResponse> {
    const { origin, path, signal } = options;
    const data = await this.undici.request.call(dispatcher, {
      origin,
      path,
      headers: options.headers,
      signal,
      method: 'GET',
    });
    const { statusCode, statusText, headers } = data;
    if (statusCode >= 200 && statusCode < 300) return { statusCode, statusText, headers, body: data.body };
    discard(data.body, statusCode);
    return { statusCode, statusText, headers, body: null };
  }

  private success(ok: HopSuccess): WebSuccessResponse {
    const { data, current, redirects, statusText, request, requestCtl, budget, release } = ok;
    const url = current.href;
    const signal = request.signal;
    const lookup = headerLookup(data.headers);
    const codings = parseContentEncoding(lookup('content-encoding')) ?? [];
    let body: ResponseBody;
    const onAbort = () => body.fail(new WebAbortError(url, signal?.reason));
    const onClose = () => body.fail(new WebBodyError('USP_CLOSED', url, 'The web client was closed', 0));
    body = new ResponseBody({
      url,
      raw: data.body,
      codings,
      maxBodyBytes: this.options.maxBodyBytes,
      maxDecodedBytes: this.options.maxDecodedBytes,
      zlibChunkBytes: ZLIB_CHUNK_BYTES,
      budget,
      abortRequest: (reason) => requestCtl.abort(reason),
      onSettle: () => {
        release();
        signal?.removeEventListener('abort', onAbort);
        this.closers.delete(onClose);
      },
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    this.closers.add(onClose);
    return {
      kind: 'ok',
      status: data.statusCode,
      statusText,
      url,
      redirects: [...redirects],
      headers: lookup,
      body,
      cancel: () => body.cancel(),
    };
  }

  private closedResponse(url: string, attempts: number): FetchErrorResponse {
    return errorResponse(url, null, 'closed', 'The web client was closed', false, attempts);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const c of [...this.closers]) c();
    this.closers.clear();
    const dispatchers: { destroy(): Promise<void> }[] = [...this.proxied.values()];
    if (this.direct !== null) dispatchers.push(this.direct);
    await Promise.all(dispatchers.map((d) => d.destroy()));
  }
}

function errorResponse(
  url: string,
  status: number | null,
  code: WebErrorCode,
  message: string,
  retryable: boolean,
  attempts: number,
): FetchErrorResponse {
  return { kind: 'error', url, status, message, code, retryable, attempts };
}

/** One release for the global and the host slot of a request; a second call does nothing. */
function releaseBoth(releaseGlobal: Release, releaseHost: Release): Release {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    releaseGlobal();
    releaseHost();
  };
}
