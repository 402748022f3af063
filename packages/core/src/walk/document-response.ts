import type { HeaderLookup } from '../contract/plugin.js';

/**
 * What the answer to one document's request was (`WalkedDocument.response`): the facts a crawler
 * stores for the next crawl and a report shows, gathered by the walk as it reads the body.
 */
export interface DocumentResponse {
  /** HTTP status: 304 for a not-modified answer, `null` when no HTTP answer came (network, blocked). */
  readonly status: number | null;
  /** The answer's `ETag` (200 or 304), `null` when none or on an error status. */
  readonly etag: string | null;
  /** The answer's `Last-Modified` (200 or 304), `null` when none or on an error status. */
  readonly lastModified: string | null;
  /** Body bytes read, Content-Encoding removed (a `.gz` file's own gzip layer still on). */
  readonly bytes: number;
  /**
   * From the call to the web client to the end of the body (read to its end, cut short or
   * dropped), unrounded: the transfer and the parse reading along with it. A client that waits
   * before sending (a politeness gate) counts its wait.
   */
  readonly ms: number;
  /**
   * `TreeOptions.hashBody`'s digest of the body, once read to its end; `null` without that
   * option, without a body, and when reading stopped early (a limit, the deadline, an error).
   */
  readonly bodyHash: string | null;
}

/** An incremental hash of a body (`TreeOptions.hashBody`), e.g. Node's `createHash('sha256')` wrapped. */
export interface BodyHasher {
  update(chunk: Uint8Array): void;
  /** The digest as text (e.g. hex), called once, after the last `update`. */
  digest(): string;
}

/** One document's `DocumentResponse`, filled in while its body is read. */
export class ResponseMeter implements DocumentResponse {
  readonly status: number | null;
  readonly etag: string | null;
  readonly lastModified: string | null;
  bytes = 0;
  ms = 0;
  bodyHash: string | null = null;
  readonly #started: number;
  #ended = false;

  /** `headers` of a 200 or 304 (their validators are kept); `null` for an error answer. */
  constructor(status: number | null, headers: HeaderLookup | null, started: number) {
    this.status = status;
    this.etag = headers === null ? null : headers('etag');
    this.lastModified = headers === null ? null : headers('last-modified');
    this.#started = started;
    if (headers === null || status === 304) this.end();
  }

  /** The body ended (or was dropped): the time stops. Later calls change nothing. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.ms = performance.now() - this.#started;
  }

  /**
   * `body`, counted (and hashed with `hasher`) as the parser reads it: no chunk is copied. One
   * generator step a chunk (tens of kB), nothing per page.
   */
  async *read(body: AsyncIterable<Uint8Array>, hasher: BodyHasher | null): AsyncGenerator<Uint8Array> {
    try {
      for await (const chunk of body) {
        this.bytes += chunk.byteLength;
        hasher?.update(chunk);
        yield chunk;
      }
      if (hasher !== null) this.bodyHash = hasher.digest();
    } finally {
      this.end();
    }
  }
}

/**
 * A document whose body is about to be parsed (`TreeOptions.beforeParse`): where a caller loads
 * what it needs for it (an incremental crawler, the pages it stored for that document last time).
 */
export interface DocumentToParse {
  /** The URL requested. */
  readonly requestedUrl: string;
  /** The URL after redirects: the URL the page store is opened with and the node gets. */
  readonly finalUrl: string;
  /** The index or robots.txt that listed it; `null` at the top level. */
  readonly parentUrl: string | null;
  /** usp's recursion level: robots.txt and known paths are 0. */
  readonly level: number;
  /** The answer so far: status and validators (bytes, time and hash are still being read). */
  readonly response: DocumentResponse;
}
