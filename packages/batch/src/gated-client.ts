import type { WebClient, WebRequestOptions, WebResponse, WebSuccessResponse } from '@usp-ts/core';
import type { PolitenessGate } from './politeness-gate.js';

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
 * One site's view of the shared client: each request first waits at the politeness gate, and
 * holds its slot until the body is read or dropped. It counts the requests sent and notes the
 * hosts they went to; what each answer was, the walk reports with its document
 * (`WalkedDocument.response`).
 */
export class GatedClient implements WebClient {
  /** The host names this site's requests went to (redirect targets included). */
  readonly hosts = new Set<string>();
  /** Requests sent (aborted ones included; one refused before it left is not). */
  requests = 0;

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
    let response: WebResponse;
    try {
      response = await this.inner.get(url, options);
    } catch (error) {
      // Aborted (the site deadline, a probe's timeout, the run stopping): it was sent all the same.
      this.requests++;
      release();
      throw error;
    }
    // Refused before it left (the private-network guard on the URL itself, not on a redirect's
    // target): not a request sent.
    if (response.kind !== 'error' || response.code !== 'blocked' || response.url !== url) this.requests++;
    if (response.url !== url) this.hosts.add(this.#hostOf(response.url));
    if (response.kind !== 'ok') {
      release();
      return response;
    }
    return gatedBody(response, release);
  }
}

/** `response` with its body and `cancel` giving the gate's slot back once read or dropped. */
function gatedBody(response: WebSuccessResponse, release: () => void): WebSuccessResponse {
  const inner = response.body;
  let done = false;
  const finish = (): void => {
    if (done) return;
    done = true;
    release();
  };
  async function* body(): AsyncGenerator<Uint8Array> {
    try {
      yield* inner;
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
