import { errorText } from '../contract/errors.js';
import { MAX_SITEMAP_BYTES } from '../contract/protocol-limits.js';
import type { WarningCode } from '../contract/warning.js';
import { createDocumentDecoder, type DocumentDecoder } from './decode.js';
import { unwrapGzip } from './detect.js';
import type { ParseObserver } from './document-options.js';
import { gunzip as defaultGunzip, type Gunzip, GunzipError, isTooLargeError } from './gunzip.js';

/** A `Uint8Array` or string body is fed in pieces this big (batches, abort checks). */
const PIECE = 64 * 1024;
/**
 * Bytes of a body chunk decoded and fed at a time, each piece's pages handed on (`flush`) before
 * the next is decoded. A 64 KiB chunk's pages (~650 of a plain urlset) and its 64 K-character
 * text, held until the whole chunk was read, lived through the scavenges of their own rows: a
 * fresh 1,000-site batch promoted 112 MB of them, 64 MB with the text fed in 16 K pieces
 * (`--trace-gc-nvp`, bench/README.md, session 21).
 */
const FEED_BYTES = 16 * 1024;

const ABORTED = Symbol('aborted');

/** Carries what `onPages` threw past the handling of body errors. */
export class ConsumerFailure {
  constructor(readonly error: unknown) {}
}

/** Where the byte pipeline delivers a document's text, and what it asks of the reader of that text. */
export interface TextSink {
  /** The next piece of decoded text. */
  feed(text: string): void;
  /** After each piece: hands the pages read so far on (may await the consumer; throws `ConsumerFailure`). */
  flush(): Promise<void>;
  /** True when reading more input would change nothing. */
  finishedEarly(): boolean;
  warn(code: WarningCode, message: string): void;
  /** The document is not read to its end. */
  cut(): void;
}

export interface BodyReaderOptions {
  readonly signal: AbortSignal | undefined;
  readonly gunzip: Gunzip | undefined;
  readonly observer: ParseObserver | undefined;
  /** `maxDecompressedBytes`. */
  readonly maxBytes: number;
}

/**
 * A document's byte pipeline: gzip layers (by magic bytes), the size caps, the charset decoder
 * (BOM, declared encoding, UTF-16) and the abort, turning any body into text for a `TextSink`.
 * A broken body, bad gzip or a cap ends the text with a warning; what came before is kept.
 */
export class BodyReader {
  /** Decoded bytes read (characters, for a string body). */
  bytes = 0;
  gzipLayers = 0;
  #decoder: DocumentDecoder | null = null;
  readonly #sink: TextSink;
  readonly #options: BodyReaderOptions;

  constructor(sink: TextSink, options: BodyReaderOptions) {
    this.#sink = sink;
    this.#options = options;
  }

  /** The charset the bytes were decoded from; `null` for a string body. */
  get encoding(): string | null {
    return this.#decoder?.encoding ?? null;
  }

  read(body: AsyncIterable<Uint8Array> | Uint8Array | string): Promise<void> {
    if (typeof body === 'string') return this.#readString(body);
    return this.#readBytes(body instanceof Uint8Array ? pieces(body) : body);
  }

  async #readString(body: string): Promise<void> {
    const signal = this.#options.signal;
    const sink = this.#sink;
    let at = 0;
    // The BOM of a string that was decoded without removing it.
    if (body.charCodeAt(0) === 0xfeff) at = 1;
    while (at < body.length) {
      if (signal?.aborted) {
        this.#aborted();
        return;
      }
      const piece = body.slice(at, at + PIECE);
      at += piece.length;
      this.bytes += piece.length;
      this.#options.observer?.text?.(piece);
      sink.feed(piece);
      await sink.flush();
      if (sink.finishedEarly()) return;
    }
  }

  async #readBytes(body: AsyncIterable<Uint8Array>): Promise<void> {
    const { signal } = this.#options;
    const sink = this.#sink;
    const cap = this.#options.maxBytes;
    const decoder = createDocumentDecoder((code, message) => sink.warn(code, message));
    this.#decoder = decoder;
    // We hold the body's own iterator so stopping early can release it at once, even while a
    // read is pending inside the gzip layers (which would only pass `return()` on later).
    const raw = body[Symbol.asyncIterator]();
    const source: AsyncIterable<Uint8Array> = {
      [Symbol.asyncIterator]: () => ({ next: () => raw.next() }),
    };
    const stream = unwrapGzip(source, {
      gunzip: this.#options.gunzip ?? defaultGunzip,
      maxOutputBytes: cap,
      onLayer: (layer) => {
        this.gzipLayers = layer;
      },
    });
    const it = stream[Symbol.asyncIterator]();
    const abort = signal === undefined ? null : abortableReads(signal);
    let complete = false;
    try {
      if (signal?.aborted) {
        this.#aborted();
        return;
      }
      while (true) {
        const next = abort === null ? await it.next() : await abort.next(it);
        if (next === ABORTED) {
          this.#aborted();
          break;
        }
        if (next.done) {
          complete = true;
          break;
        }
        let chunk = next.value;
        let over = false;
        if (this.bytes + chunk.length > cap) {
          chunk = chunk.subarray(0, cap - this.bytes);
          over = true;
        }
        const before = this.bytes;
        this.bytes += chunk.length;
        if (before <= MAX_SITEMAP_BYTES && this.bytes > MAX_SITEMAP_BYTES) {
          // Not "all is read": the size cap may still cut it, with its own `too-large` warning.
          sink.warn(
            'over-spec',
            `Larger than ${MAX_SITEMAP_BYTES} bytes uncompressed (the sitemaps.org limit); read on up to the size cap of ${cap} bytes`,
          );
        }
        if (await this.#feedPieces(chunk, decoder)) break;
        if (over) {
          sink.cut();
          sink.warn('too-large', overCapMessage(cap));
          break;
        }
        await sink.flush();
        if (sink.finishedEarly()) break;
      }
    } catch (error) {
      // The consumer's own failure is not the body's: it goes back to the caller.
      if (error instanceof ConsumerFailure) throw error.error;
      this.#failed(error, cap);
    } finally {
      abort?.dispose();
      // Stopping early releases the body (the fetcher's cancel); not awaited, it may hang.
      if (!complete) {
        raw.return?.()?.catch(() => {});
        it.return?.()?.catch(() => {});
      }
    }
    const tail = decoder.end();
    if (tail.length > 0) {
      this.#options.observer?.text?.(tail);
      sink.feed(tail);
    }
  }

  /**
   * Decodes and feeds `chunk` a piece at a time, flushing between pieces (the last piece is
   * flushed by the caller, after its size checks); true when the document needs no more input.
   */
  async #feedPieces(chunk: Uint8Array, decoder: DocumentDecoder): Promise<boolean> {
    const sink = this.#sink;
    const observer = this.#options.observer;
    // A rest shorter than half a piece goes with the piece before it.
    for (let at = 0; at < chunk.length; ) {
      const end = chunk.length - at < FEED_BYTES * 1.5 ? chunk.length : at + FEED_BYTES;
      const text = decoder.write(at === 0 && end === chunk.length ? chunk : chunk.subarray(at, end));
      if (text.length > 0) {
        observer?.text?.(text);
        sink.feed(text);
      }
      if (end === chunk.length) return false;
      at = end;
      await sink.flush();
      if (sink.finishedEarly()) return true;
    }
    return false;
  }

  /** A body that broke off: the warning says how, what was read is kept. */
  #failed(error: unknown, cap: number): void {
    const sink = this.#sink;
    sink.cut();
    if (error instanceof GunzipError && error.code === 'USP_DECODING') {
      sink.warn('gzip', `${error.message}; what decompressed before the damage is kept`);
    } else if (error instanceof GunzipError) {
      // The decompressor's cap is ours (`maxDecompressedBytes`): one message whichever saw it.
      sink.warn('too-large', overCapMessage(cap));
    } else if (isTooLargeError(error)) {
      // The body reader's own cap (the fetcher's `maxBodyBytes`): its message names it.
      sink.warn('too-large', errorText(error));
    } else {
      sink.warn('fetch', `Reading the body failed: ${errorText(error)}; what was read is kept`);
    }
  }

  #aborted(): void {
    this.#sink.cut();
    this.#sink.warn('truncated', 'Parsing was aborted; what was read is kept');
  }
}

/** A byte body in pieces, so batches flow and an abort is seen while a big buffer is read. */
async function* pieces(body: Uint8Array): AsyncGenerator<Uint8Array, void, undefined> {
  for (let i = 0; i < body.length; i += PIECE) yield body.subarray(i, i + PIECE);
}

/**
 * Reads that an abort interrupts. Each read races a fresh promise the abort listener settles;
 * racing one long-lived abort promise instead would pile a reaction per chunk onto it, each
 * holding its chunk, until the document ends.
 */
function abortableReads(signal: AbortSignal): {
  next(it: AsyncIterator<Uint8Array>): Promise<IteratorResult<Uint8Array> | typeof ABORTED>;
  dispose(): void;
} {
  let wake: ((value: typeof ABORTED) => void) | null = null;
  const onAbort = () => wake?.(ABORTED);
  signal.addEventListener('abort', onAbort, { once: true });
  return {
    async next(it) {
      if (signal.aborted) return ABORTED;
      try {
        return await new Promise<IteratorResult<Uint8Array> | typeof ABORTED>((resolve, reject) => {
          wake = resolve;
          it.next().then(resolve, reject);
        });
      } finally {
        wake = null;
      }
    },
    dispose() {
      signal.removeEventListener('abort', onAbort);
    },
  };
}

function overCapMessage(cap: number): string {
  return `Larger than ${cap} bytes uncompressed (the size cap); the rest was not read`;
}
