import { InvalidOptionError, rejectUnknownOptions } from '@usp-ts/core';
import { type ProxyRoutes, type ResolvedProxy, resolveProxy } from './proxy-routes.js';

const MiB = 1024 * 1024;

/** Options of `createWebClient`. Every one is optional; defaults are listed with each. */
export interface WebClientOptions {
  /** User-Agent header. Default `usp-ts/<version> (+https://www.npmjs.com/package/usp)`. */
  readonly userAgent?: string;
  /**
   * Extra headers sent with every request (a request's own `headers` win). Like `Authorization`
   * in fetch, they are not sent past a redirect to another origin. Default none.
   */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Proxy URL (`http://host:port`, credentials allowed) for every request, or one per scheme
   * (`{ https: '...' }`: http URLs then go direct), through undici's ProxyAgent. Default none.
   * `proxyFromEnv(process.env)` reads curl's `https_proxy`, `http_proxy` and `no_proxy`.
   */
  readonly proxy?: string | ProxyRoutes;
  /**
   * Hosts reached directly although a `proxy` is set, as curl's `NO_PROXY`: `example.com` (and its
   * subdomains), `.example.com`, `host:8080`, `[::1]`, or `*` for every host. Default none.
   */
  readonly noProxy?: readonly string[];
  /** Verify TLS certificates. Default `true`. */
  readonly tlsVerify?: boolean;
  /**
   * PEM text of the certificate authorities to trust, instead of Node's bundled roots (as curl's
   * `--cacert`): for a site or proxy with a private CA. Default: Node's roots.
   */
  readonly tlsCa?: string;
  /**
   * Allow connections to loopback, private, link-local and other non-public addresses.
   * Default `false`: such requests answer `blocked`. See `hostIsPrivate` to decide from a homepage.
   */
  readonly allowPrivateNetworks?: boolean;
  /**
   * Hosts, exactly as written in URLs (`localhost`, `127.0.0.1`, `[::1]`, `intranet.example`), let
   * through even when they are private, while every other private address stays blocked. For a
   * homepage on the local network that the user asked for. Default none.
   */
  readonly allowPrivateHosts?: readonly string[];
  /**
   * Origins (`http://127.0.0.1:8080`, `https://intranet.example`) let through even when private:
   * exactly that scheme, host and port, compared after WHATWG normalisation (`http://127.1:80` is
   * `http://127.0.0.1`). Narrower than `allowPrivateHosts`: another service on another port of the
   * same private host stays blocked. Or a function asked for each private origin (as `URL.origin`
   * gives it) when a connection to it is made: for origins learnt as a run goes (a batch lets
   * through the sites its user listed, read lazily from a long list). Default none.
   */
  readonly allowPrivateOrigins?: readonly string[] | ((origin: string) => boolean);
  /** Redirects followed per request before `redirect-limit`. Default 10. */
  readonly maxRedirects?: number;
  /** Attempts in all, the first included (usp's `retry_count`). Default 5; 1 disables retrying. */
  readonly retries?: number;
  /**
   * Attempts in all for a request that got no HTTP response at all (refused, reset, DNS, TLS,
   * timeout), never more than `retries`. Default 2: one retry. A host that refused or stayed silent
   * twice in a row will not answer a third time soon enough to be worth minutes of a walk.
   */
  readonly networkAttempts?: number;
  /** Called before each retry wait, with why and how long (for a log line). Default none. */
  readonly onRetry?: (info: RetryInfo) => void;
  /** First backoff step; doubled per retry, with jitter. Default 1,000 ms (usp's fixed sleep). */
  readonly baseDelayMs?: number;
  /** Largest backoff step. Default 30,000 ms. */
  readonly maxDelayMs?: number;
  /**
   * The longest `Retry-After` honoured. A server asking for longer gets no retry: the error is
   * returned at once rather than holding the walk. Default 30,000 ms.
   */
  readonly maxRetryAfterMs?: number;
  /** TCP (and TLS) connect timeout. Default 10,000 ms (usp: 9.05 s). */
  readonly connectTimeoutMs?: number;
  /**
   * Time from sending the request to the end of the response headers. Default 30,000 ms, or
   * `requestTimeoutMs` when that is set: a request allowed a minute is not cut at 30 s.
   */
  readonly headersTimeoutMs?: number;
  /**
   * Longest silence between two body chunks while the body is being read. Default 60,000 ms (usp's
   * read timeout), or `requestTimeoutMs` when that is set: a request allowed five minutes, as with
   * curl's `--max-time`, is not cut after a minute of silence.
   */
  readonly bodyIdleTimeoutMs?: number;
  /**
   * Total time one attempt may spend waiting on the server: connection, headers, every redirect
   * hop and the body. Time the reader spends not reading is not counted. Default 120,000 ms.
   */
  readonly requestTimeoutMs?: number;
  /** Cap on raw (wire) body bytes; past it the request is aborted. Default 100 MiB. */
  readonly maxBodyBytes?: number;
  /** Cap on body bytes after Content-Encoding is undone. Default 100 MiB (usp's limit). */
  readonly maxDecodedBytes?: number;
  /** Concurrent requests (and pooled connections) per host. Default 6. */
  readonly maxConnectionsPerHost?: number;
  /** Concurrent requests in all. Default 16. */
  readonly maxConcurrentRequests?: number;
  /** Least time between the starts of two requests to one host. Default 0 (none). */
  readonly perHostDelayMs?: number;
  /**
   * Longest time an idle connection is kept for the next request to its host, whatever the
   * server's `Keep-Alive` hint says. Default: undici's (4 s, or the server's hint less 2 s, up to
   * 10 min). A client that visits many hosts once each (the batch) sets it low: an idle socket
   * per host it has left costs memory until it closes.
   */
  readonly keepAliveTimeoutMs?: number;
}

/** What `onRetry` is told before the client waits and tries again. */
export interface RetryInfo {
  /** The URL asked for. */
  readonly url: string;
  /** The attempt that failed, counting from 1. */
  readonly attempt: number;
  /** The attempts the client may make in all for this failure (`retries` or `networkAttempts`). */
  readonly maxAttempts: number;
  /** Stable code of the failure (`http-status`, `timeout`, `connection`, ...). */
  readonly code: string;
  /** HTTP status, `null` when there was no response. */
  readonly status: number | null;
  /** The failure as text: `429 Too Many Requests`, `connect ECONNREFUSED 127.0.0.1:1`. */
  readonly reason: string;
  /** How long the client waits before the next attempt. */
  readonly delayMs: number;
}

export interface ResolvedOptions {
  readonly userAgent: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly proxy: ResolvedProxy;
  readonly tlsVerify: boolean;
  readonly tlsCa: string | undefined;
  readonly allowPrivateNetworks: boolean;
  /** Lower-cased, IPv6 without brackets. */
  readonly allowPrivateHosts: ReadonlySet<string>;
  /** As `URL.origin` gives them; a function option is asked through `has` (`size` 1). */
  readonly allowPrivateOrigins: Pick<ReadonlySet<string>, 'has' | 'size'>;
  readonly maxRedirects: number;
  readonly retries: number;
  readonly networkAttempts: number;
  readonly onRetry: ((info: RetryInfo) => void) | undefined;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly maxRetryAfterMs: number;
  readonly connectTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly bodyIdleTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly maxBodyBytes: number;
  readonly maxDecodedBytes: number;
  readonly maxConnectionsPerHost: number;
  readonly maxConcurrentRequests: number;
  readonly perHostDelayMs: number;
  readonly keepAliveTimeoutMs: number | undefined;
}

export const DEFAULTS = {
  tlsVerify: true,
  allowPrivateNetworks: false,
  maxRedirects: 10,
  retries: 5,
  networkAttempts: 2,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 30_000,
  connectTimeoutMs: 10_000,
  headersTimeoutMs: 30_000,
  bodyIdleTimeoutMs: 60_000,
  requestTimeoutMs: 120_000,
  maxBodyBytes: 100 * MiB,
  maxDecodedBytes: 100 * MiB,
  maxConnectionsPerHost: 6,
  maxConcurrentRequests: 16,
  perHostDelayMs: 0,
} as const;

/** A host as the connector sees it: lower case, IPv6 without brackets. */
export function normalizeHost(host: string): string {
  const h = host.toLowerCase();
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/** `scheme://host[:port]` of an http(s) URL as WHATWG normalises it; `null` for anything else. */
export function httpOrigin(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : null;
  } catch {
    return null;
  }
}

function int(name: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new InvalidOptionError(name, `expected an integer >= ${min}, got ${String(value)}`);
  }
  return value;
}

function bool(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean')
    throw new InvalidOptionError(name, `expected a boolean, got ${String(value)}`);
  return value;
}

// Every key of WebClientOptions, so the table cannot fall behind it.
const OPTION_KEYS = {
  userAgent: true,
  headers: true,
  proxy: true,
  noProxy: true,
  tlsVerify: true,
  tlsCa: true,
  allowPrivateNetworks: true,
  allowPrivateHosts: true,
  allowPrivateOrigins: true,
  maxRedirects: true,
  retries: true,
  networkAttempts: true,
  onRetry: true,
  baseDelayMs: true,
  maxDelayMs: true,
  maxRetryAfterMs: true,
  connectTimeoutMs: true,
  headersTimeoutMs: true,
  bodyIdleTimeoutMs: true,
  requestTimeoutMs: true,
  maxBodyBytes: true,
  maxDecodedBytes: true,
  maxConnectionsPerHost: true,
  maxConcurrentRequests: true,
  perHostDelayMs: true,
  keepAliveTimeoutMs: true,
} satisfies Record<keyof WebClientOptions, true>;

/**
 * Other clients' names for these options (fetch, undici, got, axios, curl), pointing to ours:
 * someone who knows `timeout` or `rejectUnauthorized` learns the spelling from the error.
 */
const OTHER_SPELLINGS: Readonly<Record<string, string>> = {
  timeout: 'requestTimeoutMs',
  timeoutMs: 'requestTimeoutMs',
  requestTimeout: 'requestTimeoutMs',
  connectTimeout: 'connectTimeoutMs',
  headersTimeout: 'headersTimeoutMs',
  bodyTimeout: 'bodyIdleTimeoutMs',
  insecure: 'tlsVerify: false',
  rejectUnauthorized: 'tlsVerify',
  ca: 'tlsCa',
  cacert: 'tlsCa',
  retry: 'retries',
  maxRetries: 'retries',
  maxRedirections: 'maxRedirects',
  agent: 'proxy',
  'user-agent': 'userAgent',
  useragent: 'userAgent',
};

/**
 * The `WebClientOptions` key a name stands for: the name itself when it is one, our spelling of
 * another client's (`timeout` is `requestTimeoutMs`, `insecure` is `tlsVerify: false`), else `null`.
 * For option checks that point a misplaced or foreign network option to where it belongs.
 */
export function webClientOptionName(name: string): string | null {
  if (Object.hasOwn(OPTION_KEYS, name)) return name;
  return Object.hasOwn(OTHER_SPELLINGS, name) ? OTHER_SPELLINGS[name] : null;
}

/** Checks every option before anything is built, so a typo fails at construction, not mid-walk. */
export function resolveOptions(o: WebClientOptions, defaultUserAgent: string): ResolvedOptions {
  if (o === null || typeof o !== 'object') throw new InvalidOptionError('options', 'expected an object');
  rejectUnknownOptions(o, OPTION_KEYS, '', webClientOptionName);
  if (o.userAgent !== undefined && (typeof o.userAgent !== 'string' || /[\r\n]/.test(o.userAgent))) {
    throw new InvalidOptionError('userAgent', 'expected a single-line string');
  }
  if (o.headers !== undefined) {
    if (o.headers === null || typeof o.headers !== 'object') {
      throw new InvalidOptionError('headers', 'expected an object of header names to values');
    }
    for (const [k, v] of Object.entries(o.headers)) {
      if (typeof v !== 'string' || /[\r\n]/.test(v) || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k)) {
        throw new InvalidOptionError('headers', `invalid header ${JSON.stringify(k)}`);
      }
    }
  }
  const proxy = resolveProxy(o.proxy, o.noProxy);
  if (o.tlsCa !== undefined && (typeof o.tlsCa !== 'string' || !o.tlsCa.includes('-----BEGIN'))) {
    throw new InvalidOptionError('tlsCa', 'expected PEM text (-----BEGIN CERTIFICATE-----...)');
  }
  const allowPrivateHosts = new Set<string>();
  if (o.allowPrivateHosts !== undefined) {
    if (!Array.isArray(o.allowPrivateHosts)) {
      throw new InvalidOptionError('allowPrivateHosts', 'expected an array of host names');
    }
    for (const h of o.allowPrivateHosts) {
      if (typeof h !== 'string' || h === '') {
        throw new InvalidOptionError('allowPrivateHosts', `invalid host ${JSON.stringify(h)}`);
      }
      allowPrivateHosts.add(normalizeHost(h));
    }
  }
  if (o.onRetry !== undefined && typeof o.onRetry !== 'function') {
    throw new InvalidOptionError('onRetry', 'expected a function');
  }
  let allowPrivateOrigins: Pick<ReadonlySet<string>, 'has' | 'size'> = new Set<string>();
  const askOrigin = o.allowPrivateOrigins;
  if (typeof askOrigin === 'function') {
    allowPrivateOrigins = { size: 1, has: (origin) => askOrigin(origin) === true };
  } else if (askOrigin !== undefined) {
    const origins = new Set<string>();
    allowPrivateOrigins = origins;
    if (!Array.isArray(askOrigin)) {
      throw new InvalidOptionError('allowPrivateOrigins', 'expected an array of origins, or a function');
    }
    for (const u of askOrigin) {
      const origin = typeof u === 'string' ? httpOrigin(u) : null;
      if (origin === null) {
        throw new InvalidOptionError('allowPrivateOrigins', `not an http(s) origin: ${JSON.stringify(u)}`);
      }
      origins.add(origin);
    }
  }
  const d = DEFAULTS;
  // Checked first: the headers timeout follows it when not set itself.
  const requestTimeoutMs =
    o.requestTimeoutMs === undefined
      ? undefined
      : int('requestTimeoutMs', o.requestTimeoutMs, d.requestTimeoutMs, 1);
  return {
    userAgent: o.userAgent ?? defaultUserAgent,
    headers: o.headers ?? {},
    proxy,
    tlsVerify: bool('tlsVerify', o.tlsVerify, d.tlsVerify),
    tlsCa: o.tlsCa,
    allowPrivateNetworks: bool('allowPrivateNetworks', o.allowPrivateNetworks, d.allowPrivateNetworks),
    allowPrivateHosts,
    allowPrivateOrigins,
    maxRedirects: int('maxRedirects', o.maxRedirects, d.maxRedirects, 0),
    retries: int('retries', o.retries, d.retries, 1),
    networkAttempts: int('networkAttempts', o.networkAttempts, d.networkAttempts, 1),
    onRetry: o.onRetry,
    baseDelayMs: int('baseDelayMs', o.baseDelayMs, d.baseDelayMs, 0),
    maxDelayMs: int('maxDelayMs', o.maxDelayMs, d.maxDelayMs, 0),
    maxRetryAfterMs: int('maxRetryAfterMs', o.maxRetryAfterMs, d.maxRetryAfterMs, 0),
    connectTimeoutMs: int('connectTimeoutMs', o.connectTimeoutMs, d.connectTimeoutMs, 1),
    headersTimeoutMs: int('headersTimeoutMs', o.headersTimeoutMs, requestTimeoutMs ?? d.headersTimeoutMs, 1),
    bodyIdleTimeoutMs: int(
      'bodyIdleTimeoutMs',
      o.bodyIdleTimeoutMs,
      requestTimeoutMs ?? d.bodyIdleTimeoutMs,
      1,
    ),
    requestTimeoutMs: requestTimeoutMs ?? d.requestTimeoutMs,
    maxBodyBytes: int('maxBodyBytes', o.maxBodyBytes, d.maxBodyBytes, 0),
    maxDecodedBytes: int('maxDecodedBytes', o.maxDecodedBytes, d.maxDecodedBytes, 0),
    maxConnectionsPerHost: int('maxConnectionsPerHost', o.maxConnectionsPerHost, d.maxConnectionsPerHost, 1),
    maxConcurrentRequests: int('maxConcurrentRequests', o.maxConcurrentRequests, d.maxConcurrentRequests, 1),
    perHostDelayMs: int('perHostDelayMs', o.perHostDelayMs, d.perHostDelayMs, 0),
    keepAliveTimeoutMs:
      o.keepAliveTimeoutMs === undefined ? undefined : int('keepAliveTimeoutMs', o.keepAliveTimeoutMs, 0, 1),
  };
}
