import type { WebClient, WebRequestOptions, WebResponse } from '@usp-ts/core';

/** What the report shows of one request: its HTTP status, body bytes and time to the body's end. */
export interface RequestFacts {
  /** HTTP status; 304 for a not-modified answer, `null` when no HTTP answer came. */
  status: number | null;
  bytes: number;
  ms: number;
}

/**
 * A web client that notes, per requested URL, the facts a report shows of it. The body is
 * counted as the walk reads it (a chunk at a time, nothing copied), so the time includes the
 * transfer and the parse that reads along with it, as a user waiting for that sitemap sees it.
 */
export class TimingClient implements WebClient {
  readonly facts = new Map<string, RequestFacts>();
  readonly #inner: WebClient;

  constructor(inner: WebClient) {
    this.#inner = inner;
  }

  async get(url: string, options?: WebRequestOptions): Promise<WebResponse> {
    const started = performance.now();
    const response = await this.#inner.get(url, options);
    const facts: RequestFacts = {
      status: response.kind === 'ok' ? response.status : response.kind === 'error' ? response.status : 304,
      bytes: 0,
      ms: Math.round(performance.now() - started),
    };
    this.facts.set(url, facts);
    if (response.kind !== 'ok') return response;
    const body = response.body;
    const counted = {
      async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
        try {
          for await (const chunk of body) {
            facts.bytes += chunk.byteLength;
            yield chunk;
          }
        } finally {
          facts.ms = Math.round(performance.now() - started);
        }
      },
    };
    return {
      kind: 'ok',
      status: response.status,
      statusText: response.statusText,
      url: response.url,
      redirects: response.redirects,
      headers: response.headers,
      body: counted,
      cancel: () => response.cancel(),
    };
  }
}
