import { createHash } from 'node:crypto';
import type { WebClient, WebRequestOptions, WebResponse, WebSuccessResponse } from '@usp-ts/core';
import type { PolitenessGate } from './politeness-gate.js';

/** What one request of a site walk gave, as the sitemaps output and the state need it. */
export interface RequestRecord {
  readonly url: string;
  readonly finalUrl: string;
  /** HTTP status; `null` when no response came (refused, timeout, DNS, blocked). */
  readonly status: number | null;
  readonly notModified: boolean;
  readonly etag: string | null;
  readonly lastModified: string | null;
  /** Body bytes read (after Content-Encoding was removed). */
  bytes: number;
  /** SHA-256 (hex) of the body once read to its end; `null` while reading and when cut short. */
  sha256: string | null;
  /** From the request to the end of the body. */
  ms: number;
  readonly error: string | null;
}

/** Counters of one site's requests. */
export interface RequestCounts {
  requests: number;
  /** Requests that got an HTTP answer of any status. */
  answered: number;
  /** Requests that got no answer at all. */
  failed: number;
  notModified: number;
  bytes: number;
  lastFailure: string;
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

/**
 * The end of `url`'s `scheme://authority/` when it has that plain shape (no `\\`, `?` or `#` in
 * the authority, which would end it early, and no slash right after `//`, which the parser would
 * skip): two URLs with the same such prefix have the same host name. -1 otherwise.
 */
function plainAuthorityEnd(url: string): number {
  const start = url.startsWith('http://') ? 7 : url.startsWith('https://') ? 8 : -1;
  if (start < 0) return -1;
  const slash = url.indexOf('/', start);
  if (slash <= start) return -1;
  for (let i = start; i < slash; i++) {
    const c = url.charCodeAt(i);
    if (c === 0x5c || c === 0x3f || c === 0x23) return -1;
  }
  return slash + 1;
}

/**
 * One site's view of the shared client: each request first waits at the politeness gate (and
 * holds its slot until the body is read or dropped), and is recorded (status, validators, bytes,
 * body hash, time) under the URL requested.
 */
export class RecordingClient implements WebClient {
  readonly records = new Map<string, RequestRecord>();
  /** The host names this site's requests went to (redirect targets included). */
  readonly hosts = new Set<string>();
  readonly counts: RequestCounts = {
    requests: 0,
    answered: 0,
    failed: 0,
    notModified: 0,
    bytes: 0,
    lastFailure: '',
  };

  /** The last `scheme://authority/` looked up and its host: a site's requests share one. */
  #lastPrefix = '';
  #lastHost = '';

  constructor(
    readonly inner: WebClient,
    readonly gate: PolitenessGate,
  ) {}

  /** `url`'s host name, the URL parsed only when its authority differs from the last one's. */
  #hostOf(url: string): string {
    const end = plainAuthorityEnd(url);
    if (end < 0) return hostOf(url);
    if (end === this.#lastPrefix.length && url.startsWith(this.#lastPrefix)) return this.#lastHost;
    let host: string;
    try {
      host = new URL(url).hostname;
    } catch {
      return url;
    }
    this.#lastPrefix = url.slice(0, end);
    this.#lastHost = host;
    return host;
  }

  async get(url: string, options: WebRequestOptions = {}): Promise<WebResponse> {
    const host = this.#hostOf(url);
    this.hosts.add(host);
    const release = await this.gate.acquire(host, options.signal);
    const started = performance.now();
    let response: WebResponse;
    try {
      response = await this.inner.get(url, options);
    } catch (error) {
      // Aborted (the site deadline, a probe's timeout, the run stopping): it was sent all the same.
      this.counts.requests++;
      release();
      throw error;
    }
    // Refused before it left (the private-network guard on the URL itself, not on a redirect's
    // target): not a request sent.
    if (response.kind !== 'error' || response.code !== 'blocked' || response.url !== url)
      this.counts.requests++;
    if (response.url !== url) this.hosts.add(this.#hostOf(response.url));
    if (response.kind === 'error') {
      release();
      if (response.status === null) {
        this.counts.failed++;
        this.counts.lastFailure = response.message;
      } else {
        this.counts.answered++;
      }
      this.records.set(url, {
        url,
        finalUrl: response.url,
        status: response.status,
        notModified: false,
        etag: null,
        lastModified: null,
        bytes: 0,
        sha256: null,
        ms: performance.now() - started,
        error: response.message,
      });
      return response;
    }
    this.counts.answered++;
    if (response.kind === 'not-modified') {
      release();
      this.counts.notModified++;
      this.records.set(url, {
        url,
        finalUrl: response.url,
        status: 304,
        notModified: true,
        etag: response.headers('etag'),
        lastModified: response.headers('last-modified'),
        bytes: 0,
        sha256: null,
        ms: performance.now() - started,
        error: null,
      });
      return response;
    }
    const record: RequestRecord = {
      url,
      finalUrl: response.url,
      status: response.status,
      notModified: false,
      etag: response.headers('etag'),
      lastModified: response.headers('last-modified'),
      bytes: 0,
      sha256: null,
      ms: 0,
      error: null,
    };
    this.records.set(url, record);
    const counts = this.counts;
    const inner = response.body;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      record.ms = performance.now() - started;
      release();
    };
    async function* body(): AsyncGenerator<Uint8Array> {
      const hash = createHash('sha256');
      try {
        for await (const chunk of inner) {
          hash.update(chunk);
          record.bytes += chunk.length;
          counts.bytes += chunk.length;
          yield chunk;
        }
        record.sha256 = hash.digest('hex');
      } finally {
        finish();
      }
    }
    // Fields listed one by one: a client's response may be a class whose fields a spread would miss.
    // Assigned after `redirects` rather than after a conditional spread, which V8 defines one
    // runtime call a field.
    const ok = {
      kind: 'ok',
      status: response.status,
      statusText: response.statusText,
      url: response.url,
    } as { -readonly [K in keyof WebSuccessResponse]: WebSuccessResponse[K] };
    if (response.redirects !== undefined) ok.redirects = response.redirects;
    ok.headers = response.headers;
    ok.body = body();
    ok.cancel = () => {
      response.cancel();
      finish();
    };
    return ok;
  }
}
