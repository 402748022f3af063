import type { HeaderLookup } from './plugin.js';

/**
 * The HTTP interface the tree walks against. Core has no network code: `@usp-ts/fetcher`
 * implements this on undici; tests and browsers can bring their own.
 *
 * `get` never rejects for network or HTTP trouble: it resolves to a `WebErrorResponse`.
 * It rejects only when the signal aborts.
 */
export interface WebClient {
  get(url: string, options?: WebRequestOptions): Promise<WebResponse>;
}

export interface WebRequestOptions {
  readonly signal?: AbortSignal;
  /** Extra request headers for this request. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Conditional request validators from an earlier crawl; a match answers `not-modified`. */
  readonly ifNoneMatch?: string;
  readonly ifModifiedSince?: string;
  /**
   * Asked before each retry with the failure just met; `false` returns that failure at once. A
   * walk's origin breaker uses it to stop retrying a host it has given up on. Default: retry.
   */
  readonly shouldRetry?: (error: WebErrorResponse) => boolean;
}

export type WebResponse = WebSuccessResponse | WebErrorResponse | WebNotModifiedResponse;

export interface WebSuccessResponse {
  readonly kind: 'ok';
  readonly status: number;
  readonly statusText: string;
  /** Final URL after redirects. */
  readonly url: string;
  /** The redirect hops followed, in order (not including the final URL). */
  readonly redirects?: readonly string[];
  readonly headers: HeaderLookup;
  /**
   * The body, transport encoding (Content-Encoding) already removed, capped in size. Iteration
   * throws when the body breaks off (cap passed, timeout, reset); the bytes before that count.
   */
  readonly body: AsyncIterable<Uint8Array>;
  /** Stops reading the body and releases the connection. Safe to call more than once. */
  cancel(): void;
}

export interface WebErrorResponse {
  readonly kind: 'error';
  readonly url: string;
  /** HTTP status when the server answered, `null` for network failures. */
  readonly status: number | null;
  /** usp's form: `404 Not Found`, or the network error's text. */
  readonly message: string;
  /** Stable code: `http-status`, `timeout`, `connection`, `redirect-limit`, `blocked`, `too-large`, ... */
  readonly code: string;
  readonly retryable: boolean;
}

export interface WebNotModifiedResponse {
  readonly kind: 'not-modified';
  readonly url: string;
  readonly headers: HeaderLookup;
}

/** Builds a case-insensitive lookup from a plain object or a `Headers`-like map. */
export function headerLookup(
  headers:
    | Readonly<Record<string, string | string[] | undefined>>
    | { get(name: string): string | null }
    | undefined,
): HeaderLookup {
  if (headers === undefined) return () => null;
  if (typeof (headers as { get?: unknown }).get === 'function') {
    const h = headers as { get(name: string): string | null };
    return (name) => h.get(name);
  }
  const lower = new Map<string, string>();
  for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (v === undefined) continue;
    lower.set(k.toLowerCase(), Array.isArray(v) ? v.join(', ') : v);
  }
  return (name) => lower.get(name.toLowerCase()) ?? null;
}
