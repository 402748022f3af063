import type { ChildRef, Page } from './model.js';
import type { PageWriter } from './page-store.js';
import type { HeaderLookup, ParseLimits } from './plugin.js';
import type { Registry } from './registry.js';
import type { Sitemap } from './sitemap.js';
import type { Warning, WarningListener } from './warning.js';

/** Decompresses a gzip stream with an output cap; iteration throws once the cap is passed. */
export type Gunzip = (input: AsyncIterable<Uint8Array>, maxOutputBytes: number) => AsyncIterable<Uint8Array>;

export interface ParseDocumentOptions {
  /** Final URL of the document: decides robots.txt vs plain text and resolves relative links. */
  url: string;
  body: AsyncIterable<Uint8Array> | Uint8Array | string;
  registry: Registry;
  headers?: HeaderLookup;
  onWarning?: WarningListener;
  /**
   * Receives pages in batches as they are parsed (after each chunk). The driver awaits it before
   * reading the next chunk: a slow consumer pauses the parse (backpressure).
   */
  onPages?: (pages: Page[]) => void | Promise<void>;
  /** Where the pages node keeps its pages (default: in memory). */
  pageWriter?: PageWriter;
  limits?: Partial<DocumentLimits>;
  /** Gzip decompressor (default: the platform's `DecompressionStream`). */
  gunzip?: Gunzip;
  signal?: AbortSignal;
}

export interface DocumentLimits extends ParseLimits {
  /** Cap on decompressed bytes (default 100 MiB, as usp). */
  maxDecompressedBytes: number;
}

export interface ParsedDocument {
  /** The parsed node: pages node with its pages stored, index node without children, or InvalidSitemap. */
  sitemap: Sitemap;
  /** For index nodes, the child sitemaps to fetch, in document order. */
  children: ChildRef[];
  warnings: Warning[];
  /** Decoded bytes read (after gunzip). */
  bytes: number;
  /** Whether the document ended early (cut off, malformed, limit hit). */
  truncated: boolean;
}

export function parseDocument(_options: ParseDocumentOptions): Promise<ParsedDocument> {
  throw new Error('not implemented yet');
}
