import { errorText, InvalidOptionError } from '../contract/errors.js';
import type { ChildRef, Page } from '../contract/model.js';
import { noParserReason, type ParsedDocument } from '../contract/parsed-document.js';
import type {
  DocumentInfo,
  DocumentPosition,
  HeaderLookup,
  ParseContext,
  ParseLimits,
  ParseOutcome,
  TextFormat,
  TextParser,
  XmlName,
} from '../contract/plugin.js';
import { MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP } from '../contract/protocol-limits.js';
import type { Registry } from '../contract/registry.js';
import type { DocumentSitemapType, PagesSitemapType } from '../contract/sitemap.js';
import type { Warning, WarningCode, WarningListener } from '../contract/warning.js';
import { createDocumentDecoder, type DocumentDecoder } from './decode.js';
import { firstNonWhitespace, unwrapGzip } from './detect.js';
import { gunzip as defaultGunzip, type Gunzip, GunzipError, isTooLargeError } from './gunzip.js';
import { objectArray } from './object-array.js';
import { rejectUnknownOptions } from './options.js';
import { type UrlProblem, unfetchableUrl, unfetchableUrlMessage } from './url.js';
import { createXmlEngine, type XmlEngine } from './xml.js';

export interface ParseDocumentOptions {
  /** Final URL of the document: decides robots.txt vs plain text and resolves relative links. */
  url: string;
  body: AsyncIterable<Uint8Array> | Uint8Array | string;
  registry: Registry;
  headers?: HeaderLookup;
  onWarning?: WarningListener;
  /**
   * The one page sink: receives pages in batches as they are parsed (after each chunk), with the
   * type of the pages node they belong to. The driver awaits it before reading the next chunk: a
   * slow consumer pauses the parse (backpressure). Without it pages are counted, not kept.
   */
  onPages?: (pages: Page[], type: PagesSitemapType) => void | Promise<void>;
  limits?: Partial<DocumentLimits>;
  /** Gzip decompressor (default: the platform's `DecompressionStream`). */
  gunzip?: Gunzip;
  /** Stops reading promptly; what was read is kept and the result is marked truncated. */
  signal?: AbortSignal;
  /** Sees what the format reports, where it reports it (for a linter); parsing is unchanged. */
  observer?: ParseObserver;
  /**
   * Which tokenizer reads an XML document: `'auto'` (the default) reads with the fast path while
   * the document stays within the XML sitemaps are written in and hands the rest to sax, with
   * the same result; `'sax'` reads the whole document with sax (to compare, or to rule the fast
   * path out).
   */
  xmlTokenizer?: 'auto' | 'sax';
}

/**
 * What a linter (`usp validate`) needs of a parse beyond its result: each page, child and
 * warning as the format reports it, before the driver's own checks and caps, with the
 * position the format gave (`ParseContext.at`; `null` when it gave none), and the decoded text.
 */
export interface ParseObserver {
  /** The format moved on: the entry or line it reads now, `null` between entries. */
  at?(position: DocumentPosition | null): void;
  page?(page: Page, at: DocumentPosition | null): void;
  child?(ref: ChildRef, at: DocumentPosition | null): void;
  /** A warning the format (or an extension) raised; the driver's own reach `onWarning` only. */
  warn?(code: WarningCode, message: string, at: DocumentPosition | null): void;
  /** The document's text as decoded (after gunzip and charset decoding), piece by piece. */
  text?(text: string): void;
}

export interface DocumentLimits extends ParseLimits {
  /** Cap on decompressed bytes (default 100 MiB, as usp). */
  maxDecompressedBytes: number;
  /** Deepest XML element nesting read (default 256). */
  maxElementDepth: number;
  /** Character data kept per XML element, in characters (default 1 MiB). */
  maxTextLength: number;
}

/** The defaults `parseDocument` fills in. */
export const DEFAULT_DOCUMENT_LIMITS: Readonly<DocumentLimits> = {
  // 20 times the sitemaps.org limit; the byte cap bounds a document to a few million entries anyway.
  maxPagesPerDocument: 1_000_000,
  maxChildrenPerIndex: 50_000,
  maxUrlLength: 65_536,
  maxDecompressedBytes: 100 * 1024 * 1024,
  maxElementDepth: 256,
  maxTextLength: 1024 * 1024,
};

/** Warnings kept per code and document; the rest are counted in one summary warning. */
const MAX_WARNINGS_PER_CODE = 100;
/** A `Uint8Array` or string body is fed in pieces this big (batches, abort checks). */
const PIECE = 64 * 1024;
/** Characters of a non-XML document given to text formats to decide. */
const HEAD_CHARS = 1024;

/**
 * Parses one sitemap document: gzip (by magic bytes) → text (BOM, declared encoding, UTF-16)
 * → XML or text → the format that claims it. Streams: memory does not grow with the document,
 * pages flow to `onPages` chunk by chunk; the result describes the document as plain data
 * (`sitemapFromDocument` makes it a node). Never throws for bad content or a broken body; throws
 * `InvalidOptionError` for bad options and rethrows what `onPages` throws.
 */
export async function parseDocument(options: ParseDocumentOptions): Promise<ParsedDocument> {
  const limits = checkParseDocumentOptions(options);
  const run = new DocumentRun(options, limits);
  return run.run();
}

// Every key of ParseDocumentOptions, so the table cannot fall behind it.
const PARSE_DOCUMENT_OPTIONS = {
  url: true,
  body: true,
  registry: true,
  headers: true,
  onWarning: true,
  onPages: true,
  limits: true,
  gunzip: true,
  signal: true,
  observer: true,
  xmlTokenizer: true,
} satisfies Record<keyof ParseDocumentOptions, true>;

/**
 * The checks `parseDocument` makes before reading anything, with the limits they resolve to: for
 * a parser of your own (a worker pool, say) that must refuse bad options exactly as
 * `parseDocument` does before handing a document elsewhere. Throws `InvalidOptionError`.
 */
export function checkParseDocumentOptions(options: ParseDocumentOptions): DocumentLimits {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionError('options', 'must be an object');
  rejectUnknownOptions(options, PARSE_DOCUMENT_OPTIONS);
  if (typeof options.url !== 'string' || options.url === '') {
    throw new InvalidOptionError('url', 'must be a non-empty string');
  }
  const body = options.body as unknown;
  if (
    typeof body !== 'string' &&
    !(body instanceof Uint8Array) &&
    (body === null ||
      typeof body !== 'object' ||
      typeof (body as AsyncIterable<unknown>)[Symbol.asyncIterator] !== 'function')
  ) {
    throw new InvalidOptionError('body', 'must be a string, a Uint8Array or an AsyncIterable<Uint8Array>');
  }
  if (options.observer !== undefined && (options.observer === null || typeof options.observer !== 'object')) {
    throw new InvalidOptionError('observer', 'must be an object ({ page, child, warn, text })');
  }
  if (
    options.xmlTokenizer !== undefined &&
    options.xmlTokenizer !== 'auto' &&
    options.xmlTokenizer !== 'sax'
  ) {
    throw new InvalidOptionError('xmlTokenizer', "must be 'auto' or 'sax'");
  }
  if (options.registry === null || typeof options.registry?.xmlFormatFor !== 'function') {
    throw new InvalidOptionError('registry', 'must be a Registry (createRegistry)');
  }
  for (const name of ['onWarning', 'onPages', 'gunzip'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') {
      throw new InvalidOptionError(name, 'must be a function');
    }
  }
  const limits: DocumentLimits = { ...DEFAULT_DOCUMENT_LIMITS };
  for (const [key, value] of Object.entries(options.limits ?? {})) {
    if (value === undefined) continue;
    if (!(key in DEFAULT_DOCUMENT_LIMITS)) throw new InvalidOptionError(`limits.${key}`, 'unknown limit');
    if (typeof value !== 'number' || Number.isNaN(value) || value < 1) {
      throw new InvalidOptionError(`limits.${key}`, 'must be a number >= 1');
    }
    (limits as unknown as Record<string, number>)[key] =
      value === Number.POSITIVE_INFINITY ? value : Math.floor(value);
  }
  return limits;
}

/**
 * `sniff`: nothing but whitespace seen yet; `text-head`: not XML, collecting the first
 * characters for the text formats to decide on; `done`: no format reads the rest.
 */
type Mode = 'sniff' | 'text-head' | 'xml' | 'text' | 'done';

const ABORTED = Symbol('aborted');

/** Carries what `onPages` threw past the handling of body errors. */
class ConsumerFailure {
  constructor(readonly error: unknown) {}
}

/**
 * The context formats get when an observer is watching: it tells the observer what the format
 * reports, with the position the format last gave, then passes it on to the run.
 */
class ObservedContext implements ParseContext {
  readonly url: string;
  readonly limits: ParseLimits;
  #position: DocumentPosition | null = null;

  constructor(
    readonly run: ParseContext,
    readonly observer: ParseObserver,
  ) {
    this.url = run.url;
    this.limits = run.limits;
  }

  atEntry(entry: number): void {
    this.#position = entry === 0 ? null : { entry };
    this.observer.at?.(this.#position);
  }

  atLine(line: number): void {
    this.#position = { line };
    this.observer.at?.(this.#position);
  }

  warn(code: WarningCode, message: string): void {
    this.observer.warn?.(code, message, this.#position);
    this.run.warn(code, message);
  }

  page(page: Page): boolean {
    this.observer.page?.(page, this.#position);
    return this.run.page(page);
  }

  child(ref: ChildRef): boolean {
    this.observer.child?.(ref, this.#position);
    return this.run.child(ref);
  }
}

/** One document being read; it is also the `ParseContext` formats write into. */
class DocumentRun implements ParseContext {
  readonly url: string;
  readonly limits: DocumentLimits;
  readonly #options: ParseDocumentOptions;
  /** What formats write into: this run, or an observed context around it. */
  readonly #formatCtx: ParseContext;
  #root: XmlName | null = null;

  readonly #warnings: Warning[] = [];
  readonly #warningCounts = new Map<string, number>();

  #batch: Page[] = objectArray<Page>();
  #pageCount = 0;
  readonly #children: ChildRef[] = [];
  #budgetSpent = false;

  #bytes = 0;
  #truncated = false;
  #gzipLayers = 0;
  #decoder: DocumentDecoder | null = null;

  #mode: Mode = 'sniff';
  #pending = '';
  #engine: XmlEngine | null = null;
  #textParser: TextParser | null = null;
  #textFormat: TextFormat | null = null;
  #invalidReason: string | null = null;

  constructor(options: ParseDocumentOptions, limits: DocumentLimits) {
    this.#options = options;
    this.url = options.url;
    this.limits = limits;
    this.#formatCtx = options.observer === undefined ? this : new ObservedContext(this, options.observer);
  }

  // ------------------------------------------------------------------------------------------
  // ParseContext

  // Positions matter only to an observer (its own context keeps them).
  atEntry(): void {}
  atLine(): void {}

  warn(code: WarningCode, message: string): void {
    const count = (this.#warningCounts.get(code) ?? 0) + 1;
    this.#warningCounts.set(code, count);
    if (count > MAX_WARNINGS_PER_CODE) return;
    this.#emitWarning({ code, message, url: this.url });
  }

  page(page: Page): boolean {
    if (this.#pageCount >= this.limits.maxPagesPerDocument) {
      this.#spendBudget(
        `More than ${this.limits.maxPagesPerDocument} pages in one document; the rest were not read`,
      );
      return false;
    }
    if (page.url.length > this.limits.maxUrlLength) {
      this.warn('invalid-url', `Page URL longer than ${this.limits.maxUrlLength} characters skipped`);
      return true;
    }
    const problem = unfetchableUrl(page.url);
    if (problem !== null) {
      this.#warnUnfetchable(problem, 'Page URL', page.url);
      return true;
    }
    if (this.#options.onPages !== undefined) this.#batch.push(page);
    this.#pageCount++;
    if (this.#pageCount === MAX_URLS_PER_SITEMAP + 1) {
      this.warn(
        'over-spec',
        `More than ${MAX_URLS_PER_SITEMAP} pages in one sitemap (the sitemaps.org limit); all are read`,
      );
    }
    // `true` even for the last page the budget allows: only a refused page says "stop", so the
    // `limit` warning means there really was more.
    return true;
  }

  child(ref: ChildRef): boolean {
    if (this.#children.length >= this.limits.maxChildrenPerIndex) {
      this.#spendBudget(
        `More than ${this.limits.maxChildrenPerIndex} child sitemaps in one index; the rest were not read`,
      );
      return false;
    }
    if (ref.url.length > this.limits.maxUrlLength) {
      this.warn(
        'invalid-url',
        `Child sitemap URL longer than ${this.limits.maxUrlLength} characters skipped`,
      );
      return true;
    }
    const problem = unfetchableUrl(ref.url);
    if (problem !== null) {
      this.#warnUnfetchable(problem, 'Child sitemap URL', ref.url);
      return true;
    }
    this.#children.push(ref);
    return true;
  }

  #warnUnfetchable(problem: UrlProblem, what: string, url: string): void {
    this.warn(problem, `${what} ${unfetchableUrlMessage(problem)}, skipped: ${url}`);
  }

  #spendBudget(message: string): void {
    if (this.#budgetSpent) return;
    this.#budgetSpent = true;
    this.#truncated = true;
    this.warn('limit', message);
  }

  #emitWarning(warning: Warning): void {
    this.#warnings.push(warning);
    const listener = this.#options.onWarning;
    if (listener === undefined) return;
    try {
      listener(warning);
    } catch {
      // A listener's own failure is not the document's; parsing goes on.
    }
  }

  // ------------------------------------------------------------------------------------------
  // Reading

  async run(): Promise<ParsedDocument> {
    const body = this.#options.body;
    try {
      if (typeof body === 'string') await this.#readString(body);
      else await this.#readBytes(body instanceof Uint8Array ? pieces(body) : body);
      this.#endFormat();
      await this.#flushPages();
    } catch (error) {
      throw error instanceof ConsumerFailure ? error.error : error;
    }
    return this.#result();
  }

  async #readString(body: string): Promise<void> {
    const signal = this.#options.signal;
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
      this.#bytes += piece.length;
      this.#options.observer?.text?.(piece);
      this.#feed(piece);
      await this.#flushPages();
      if (this.#finishedEarly()) return;
    }
  }

  async #readBytes(body: AsyncIterable<Uint8Array>): Promise<void> {
    const { signal } = this.#options;
    const cap = this.limits.maxDecompressedBytes;
    const decoder = createDocumentDecoder((code, message) => this.warn(code, message));
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
        this.#gzipLayers = layer;
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
        if (this.#bytes + chunk.length > cap) {
          chunk = chunk.subarray(0, cap - this.#bytes);
          over = true;
        }
        const before = this.#bytes;
        this.#bytes += chunk.length;
        if (before <= MAX_SITEMAP_BYTES && this.#bytes > MAX_SITEMAP_BYTES) {
          // Not "all is read": the size cap may still cut it, with its own `too-large` warning.
          this.warn(
            'over-spec',
            `Larger than ${MAX_SITEMAP_BYTES} bytes uncompressed (the sitemaps.org limit); read on up to the size cap of ${cap} bytes`,
          );
        }
        const text = decoder.write(chunk);
        if (text.length > 0) {
          this.#options.observer?.text?.(text);
          this.#feed(text);
        }
        if (over) {
          this.#truncated = true;
          this.warn('too-large', overCapMessage(cap));
          break;
        }
        await this.#flushPages();
        if (this.#finishedEarly()) break;
      }
    } catch (error) {
      // The consumer's own failure is not the body's: it goes back to the caller.
      if (error instanceof ConsumerFailure) throw error.error;
      this.#truncated = true;
      if (error instanceof GunzipError && error.code === 'USP_DECODING') {
        this.warn('gzip', `${error.message}; what decompressed before the damage is kept`);
      } else if (error instanceof GunzipError) {
        // The decompressor's cap is ours (`maxDecompressedBytes`): one message whichever saw it.
        this.warn('too-large', overCapMessage(cap));
      } else if (isTooLargeError(error)) {
        // The body reader's own cap (the fetcher's `maxBodyBytes`): its message names it.
        this.warn('too-large', errorText(error));
      } else {
        this.warn('fetch', `Reading the body failed: ${errorText(error)}; what was read is kept`);
      }
    } finally {
      abort?.dispose();
      // Stopping early releases the body (the fetcher's cancel); not awaited, it may hang.
      if (!complete) {
        raw.return?.()?.catch(() => {});
        it.return?.()?.catch(() => {});
      }
    }
    const tail = decoder.end();
    if (tail.length > 0) this.#options.observer?.text?.(tail);
    if (tail.length > 0 && this.#mode !== 'done') this.#feed(tail);
  }

  #aborted(): void {
    this.#truncated = true;
    this.warn('truncated', 'Parsing was aborted; what was read is kept');
  }

  /** True when reading more input would change nothing. */
  #finishedEarly(): boolean {
    if (this.#budgetSpent) return true;
    if (this.#mode === 'done') return true;
    return this.#mode === 'xml' && (this.#engine as XmlEngine).done;
  }

  async #flushPages(): Promise<void> {
    const onPages = this.#options.onPages;
    if (onPages === undefined || this.#batch.length === 0) return;
    const batch = this.#batch;
    this.#batch = objectArray<Page>();
    try {
      await onPages(batch, this.#pagesType());
    } catch (error) {
      throw new ConsumerFailure(error);
    }
  }

  #pagesType(): PagesSitemapType {
    const declared = this.#mode === 'xml' ? this.#engine?.type : this.#textParser?.type;
    if (declared?.startsWith('Pages')) return declared as PagesSitemapType;
    return this.#mode === 'xml' ? 'PagesXMLSitemap' : 'PagesTextSitemap';
  }

  // ------------------------------------------------------------------------------------------
  // Text to the format

  #feed(text: string): void {
    switch (this.#mode) {
      case 'xml':
        (this.#engine as XmlEngine).write(text);
        if (this.#budgetSpent) (this.#engine as XmlEngine).stop();
        return;
      case 'text':
        this.#writeText(text);
        return;
      case 'sniff':
        this.#sniff(text);
        return;
      case 'text-head':
        this.#pending += text;
        if (this.#pending.length >= HEAD_CHARS) this.#startText();
        return;
      case 'done':
        return;
    }
  }

  #sniff(text: string): void {
    const i = firstNonWhitespace(text);
    if (i === -1) {
      // Leading whitespace carries nothing; keep only enough of it for the text formats' head.
      if (this.#pending.length < HEAD_CHARS)
        this.#pending += text.slice(0, HEAD_CHARS - this.#pending.length);
      return;
    }
    if (text.charCodeAt(i) === 0x3c) {
      this.#pending = '';
      this.#mode = 'xml';
      this.#engine = createXmlEngine({
        url: this.url,
        registry: this.#options.registry,
        ctx: this,
        formatCtx: this.#formatCtx,
        limits: { maxDepth: this.limits.maxElementDepth, maxTextLength: this.limits.maxTextLength },
        tokenizer: this.#options.xmlTokenizer,
      });
      this.#feed(i === 0 ? text : text.slice(i));
      return;
    }
    this.#mode = 'text-head';
    this.#feed(text);
  }

  #startText(): void {
    const pending = this.#pending;
    this.#pending = '';
    const info: DocumentInfo = {
      url: this.url,
      headers: this.#options.headers ?? noHeaders,
      head: pending.slice(0, HEAD_CHARS),
    };
    for (const format of this.#options.registry.textFormats) {
      let claimed = false;
      try {
        claimed = format.claims(info);
      } catch (error) {
        this.warn(
          'plugin-error',
          `Format ${format.name} failed to look at the document: ${errorText(error)}`,
        );
      }
      if (!claimed) continue;
      try {
        this.#textFormat = format;
        this.#textParser = format.createParser(this.#formatCtx);
        this.#mode = 'text';
      } catch (error) {
        this.#pluginFailed(format, error);
        return;
      }
      if (pending.length > 0) this.#writeText(pending);
      return;
    }
    this.#mode = 'done';
    this.#invalidReason = noParserReason(this.url, 'not XML, and no text format claims it');
  }

  #writeText(text: string): void {
    if (this.#budgetSpent) return;
    try {
      (this.#textParser as TextParser).write(text);
    } catch (error) {
      this.#pluginFailed(this.#textFormat as TextFormat, error);
    }
  }

  #pluginFailed(format: TextFormat, error: unknown): void {
    this.warn('plugin-error', `Format ${format.name} failed: ${errorText(error)}`);
    this.#truncated = true;
    this.#mode = 'done';
    this.#textParser = null;
    this.#invalidReason = noParserReason(this.url, `format ${format.name} failed`);
  }

  #outcome: ParseOutcome | null = null;

  #endFormat(): void {
    if (this.#mode === 'sniff' || this.#mode === 'text-head') this.#startText();
    if (this.#mode === 'xml') {
      const engine = this.#engine as XmlEngine;
      if (this.#truncated) engine.stop();
      const result = engine.end();
      this.#root = result.root;
      if (result.truncated) this.#truncated = true;
      this.#outcome = result.outcome;
      return;
    }
    if (this.#mode === 'text') {
      const parser = this.#textParser as TextParser;
      try {
        this.#outcome = parser.end(this.#truncated);
      } catch (error) {
        this.#pluginFailed(this.#textFormat as TextFormat, error);
      }
    }
    this.#outcome ??= {
      type: 'InvalidSitemap',
      reason: this.#invalidReason ?? noParserReason(this.url),
    };
  }

  #result(): ParsedDocument {
    for (const [code, count] of this.#warningCounts) {
      if (count > MAX_WARNINGS_PER_CODE) {
        this.#emitWarning({
          code,
          message: `${count - MAX_WARNINGS_PER_CODE} more '${code}' warnings were not listed`,
          url: this.url,
        });
      }
    }
    const outcome = this.#outcome as ParseOutcome;
    const type = DOCUMENT_TYPES.has(outcome.type) ? outcome.type : 'InvalidSitemap';
    const isIndex = type === 'IndexXMLSitemap' || type === 'IndexRobotsTxtSitemap';
    return {
      url: this.url,
      type,
      reason: type === 'InvalidSitemap' ? (outcome.reason ?? noParserReason(this.url)) : null,
      robots: type === 'IndexRobotsTxtSitemap' ? (outcome.robots ?? null) : null,
      children: isIndex ? this.#children : [],
      warnings: this.#warnings,
      pageCount: type.startsWith('Pages') ? this.#pageCount : 0,
      bytes: this.#bytes,
      truncated: this.#truncated,
      format:
        outcome.type === 'InvalidSitemap' ? null : (this.#engine?.format ?? this.#textFormat?.name ?? null),
      encoding: this.#decoder?.encoding ?? null,
      gzipLayers: this.#gzipLayers,
      root: this.#root,
    };
  }
}

/** The types a format may end a document with; anything else is read as `InvalidSitemap`. */
const DOCUMENT_TYPES: ReadonlySet<string> = new Set<DocumentSitemapType>([
  'PagesXMLSitemap',
  'PagesTextSitemap',
  'PagesRSSSitemap',
  'PagesAtomSitemap',
  'IndexXMLSitemap',
  'IndexRobotsTxtSitemap',
  'InvalidSitemap',
]);

function noHeaders(): string | null {
  return null;
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
