import { InvalidOptionError } from '../contract/errors.js';
import { rejectUnknownOptions } from '../engine/options.js';

/** Thresholds of an {@link OriginBreaker}. Counts are of documents (one `get`, retries included). */
export interface OriginBreakerOptions {
  /**
   * Documents on one origin whose request got no HTTP response at all, after its retries (refused,
   * reset, DNS, TLS, a timeout before the headers), before the walk gives that origin up. Default 1:
   * a host that failed robots.txt twice at the network level will fail the 14 known paths too.
   */
  readonly openAfterFailedDocuments?: number;
  /**
   * Documents in a row on one origin answered 429 or 503 (after their retries) before the walk
   * gives that origin up. Default 3. From the first such document on, requests to that origin are
   * not retried (one attempt each) until it answers something else.
   */
  readonly openAfterThrottledDocuments?: number;
}

export const DEFAULT_OPEN_AFTER_FAILED_DOCUMENTS = 1;
export const DEFAULT_OPEN_AFTER_THROTTLED_DOCUMENTS = 3;

/**
 * What a walk does with an origin: `closed` sends requests and retries as the client would;
 * `no-retries` sends one attempt per document; `open` sends nothing (the origin is unreachable).
 */
export type OriginState = 'closed' | 'no-retries' | 'open';

/** What a web client answered, as far as the breaker cares (a `WebResponse` fits). */
export interface OriginOutcome {
  readonly kind: string;
  /** HTTP status; `null` when no response came. */
  readonly status?: number | null;
  readonly code?: string;
  readonly message?: string;
}

/** Failures that say nothing about the origin: the request never left, or left by our choice. */
const NOT_THE_ORIGIN = new Set(['blocked', 'invalid-url', 'aborted', 'closed', 'too-large', 'decoding']);
const THROTTLING = new Set([429, 503]);

interface OriginRecord {
  state: OriginState;
  failedDocuments: number;
  throttledInRow: number;
  /** The first failure that counted, as `url: message`: why the origin was given up. */
  firstFailure: string | null;
}

const KEYS = {
  openAfterFailedDocuments: true,
  openAfterThrottledDocuments: true,
} satisfies Record<keyof OriginBreakerOptions, true>;

function threshold(name: keyof OriginBreakerOptions, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (value === Number.POSITIVE_INFINITY) return value;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new InvalidOptionError(name, 'must be an integer >= 1 (or Infinity to never open)');
  }
  return value;
}

/**
 * A per-origin circuit breaker for one walk (or one batch of walks that share it). The walk asks
 * `refusal(url)` before a request and `mayRetry(url)` before each retry, and tells `record(url,
 * response)` what came back. Origins are compared after WHATWG normalisation
 * (`http://127.1:80/` is `http://127.0.0.1`). No timers: an open origin stays open for the
 * breaker's life, which is one walk by default.
 */
export class OriginBreaker {
  readonly openAfterFailedDocuments: number;
  readonly openAfterThrottledDocuments: number;
  readonly #origins = new Map<string, OriginRecord>();
  /**
   * The last URL looked up and its origin: a walk asks `refusal(url)` before each request and
   * `record(url, …)` after it, and parsing the same URL twice was a URL object per request.
   */
  #lastUrl: string | null = null;
  #lastKey: string | null = null;

  constructor(options: OriginBreakerOptions = {}) {
    if (options === null || typeof options !== 'object') {
      throw new InvalidOptionError('originBreaker', 'must be an object of thresholds, or false');
    }
    rejectUnknownOptions(options, KEYS);
    this.openAfterFailedDocuments = threshold(
      'openAfterFailedDocuments',
      options.openAfterFailedDocuments,
      DEFAULT_OPEN_AFTER_FAILED_DOCUMENTS,
    );
    this.openAfterThrottledDocuments = threshold(
      'openAfterThrottledDocuments',
      options.openAfterThrottledDocuments,
      DEFAULT_OPEN_AFTER_THROTTLED_DOCUMENTS,
    );
  }

  /** The state of `url`'s origin (`closed` for one never seen or not a URL). */
  state(url: string): OriginState {
    const key = this.#originOf(url);
    return key === null ? 'closed' : (this.#origins.get(key)?.state ?? 'closed');
  }

  /** `null` when a request to `url` may be sent; otherwise why its origin was given up. */
  refusal(url: string): string | null {
    const key = this.#originOf(url);
    const r = key === null ? undefined : this.#origins.get(key);
    if (r === undefined || r.state !== 'open') return null;
    return `host unreachable: ${r.firstFailure ?? key}`;
  }

  /** Whether a request to `url` that just failed may be tried again. */
  mayRetry(url: string): boolean {
    return this.state(url) === 'closed';
  }

  #originOf(url: string): string | null {
    if (url !== this.#lastUrl) {
      this.#lastKey = originOf(url);
      this.#lastUrl = url;
    }
    return this.#lastKey;
  }

  /** Origins given up so far, with the failure that counted first. */
  openOrigins(): { origin: string; reason: string }[] {
    const out: { origin: string; reason: string }[] = [];
    for (const [origin, r] of this.#origins) {
      if (r.state === 'open') out.push({ origin, reason: r.firstFailure ?? origin });
    }
    return out;
  }

  /**
   * Records what one document's request ended with (after its retries). Returns `true` when this
   * record opened the origin, so the caller can say so once.
   */
  record(url: string, outcome: OriginOutcome): boolean {
    const key = this.#originOf(url);
    if (key === null) return false;
    let r = this.#origins.get(key);
    const status = outcome.status ?? null;
    const failed = outcome.kind === 'error' && status === null && !NOT_THE_ORIGIN.has(outcome.code ?? '');
    const throttled = outcome.kind === 'error' && status !== null && THROTTLING.has(status);
    if (!failed && !throttled) {
      // Any other answer shows the origin is there and serving: the throttling streak ends.
      if (r !== undefined && outcome.kind !== 'error' && r.state === 'no-retries') {
        r.state = 'closed';
        r.throttledInRow = 0;
      } else if (r !== undefined && status !== null) r.throttledInRow = 0;
      return false;
    }
    if (r === undefined) {
      r = { state: 'closed', failedDocuments: 0, throttledInRow: 0, firstFailure: null };
      this.#origins.set(key, r);
    }
    if (r.state === 'open') return false;
    r.firstFailure ??= `${url}: ${outcome.message ?? outcome.code ?? 'failed'}`;
    if (failed) r.failedDocuments++;
    else r.throttledInRow++;
    if (
      r.failedDocuments >= this.openAfterFailedDocuments ||
      r.throttledInRow >= this.openAfterThrottledDocuments
    ) {
      r.state = 'open';
      return true;
    }
    r.state = 'no-retries';
    return false;
  }
}

function originOf(url: string): string | null {
  try {
    const o = new URL(url).origin;
    return o === 'null' ? null : o;
  } catch {
    return null;
  }
}
