import { InvalidOptionError } from '../contract/errors.js';
import type { ChildRef, Page } from '../contract/model.js';
import type { EncodedPages } from '../contract/page-store.js';
import type { DocumentPosition, HeaderLookup, ParseLimits } from '../contract/plugin.js';
import type { Registry } from '../contract/registry.js';
import type { PagesSitemapType } from '../contract/sitemap.js';
import type { WarningCode, WarningListener } from '../contract/warning.js';
import type { Gunzip } from './gunzip.js';
import { rejectUnknownOptions } from './options.js';

export interface ParseDocumentOptions {
  /** Final URL of the document: decides robots.txt vs plain text and resolves relative links. */
  url: string;
  body: AsyncIterable<Uint8Array> | Uint8Array | string;
  registry: Registry;
  headers?: HeaderLookup;
  onWarning?: WarningListener;
  /**
   * The one page sink: receives pages in batches as they are parsed (after each piece read:
   * 16-24 KiB of a byte body), with the type of the pages node they belong to. The driver
   * awaits it before reading the next piece: a slow consumer pauses the parse (backpressure).
   * Without it pages are counted, not kept.
   * `encoded` is the same batch in a page store's own form when the parser made it (`usp`'s
   * parse workers do, see `EncodedPages`); a walk hands it to its store with the pages.
   */
  onPages?: (pages: Page[], type: PagesSitemapType, encoded?: EncodedPages) => void | Promise<void>;
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
