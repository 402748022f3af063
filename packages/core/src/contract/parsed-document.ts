import type { ChildRef, RobotsRules } from './model.js';
import { type StoredPages, storedPages } from './page-store.js';
import type { XmlName } from './plugin.js';
import {
  createPagesSitemap,
  type DocumentSitemapType,
  IndexRobotsTxtSitemap,
  IndexXMLSitemap,
  InvalidSitemap,
  type Sitemap,
} from './sitemap.js';
import type { SitemapDate } from './sitemap-date.js';
import type { Warning } from './warning.js';

/**
 * What reading one document found, as plain data (it crosses threads as it is, once dates are
 * tagged). The pages went to the parser's one page sink as they were read; the node is built from
 * this description by {@link sitemapFromDocument}, wherever the pages ended up.
 */
export interface ParsedDocument {
  /** Final URL of the document. */
  readonly url: string;
  /** The node type the document makes. */
  readonly type: DocumentSitemapType;
  /** For `InvalidSitemap`: why (default: no format reads it). */
  readonly reason?: string | null;
  /** For `IndexRobotsTxtSitemap`: the rest of robots.txt, when the format provides it. */
  readonly robots?: RobotsRules | null;
  /** For index documents, the child sitemaps (with their `<lastmod>`) in document order. */
  readonly children: ChildRef[];
  readonly warnings: Warning[];
  /** Decoded bytes read (after gunzip). */
  readonly bytes: number;
  /** Whether the document ended early (cut off, malformed, limit hit). */
  readonly truncated: boolean;
  // Always set by parseDocument; optional so hand-built results (tests, parse hooks) stay valid.
  /** Pages handed to the page sink. */
  readonly pageCount?: number;
  /** Name of the format that read the document; `null` when none did. */
  readonly format?: string | null;
  /** The text encoding used (WHATWG name); `null` for a string body. */
  readonly encoding?: string | null;
  /** How many gzip layers were removed (by magic bytes). */
  readonly gzipLayers?: number;
  /** The root element of an XML document (namespace URI and local name); `null` for text. */
  readonly root?: XmlName | null;
}

/** What the node has that the document does not say: where its pages are, what its parent said. */
export interface DocumentNodeParts {
  /** The pages of a pages document, as the caller's sink stored them (default: none). Released for other types. */
  readonly stored?: StoredPages;
  /** The `<lastmod>` the parent index gave this sitemap. */
  readonly lastModified?: SitemapDate | null;
}

/** usp's reason for a document no format reads, with what went wrong when it is known. */
export function noParserReason(url: string, detail?: string): string {
  const reason = `No parsers support sitemap from ${url}`;
  return detail === undefined ? reason : `${reason}: ${detail}`;
}

/**
 * The one place a parsed document becomes a node (the walk, one-off parses and the worker
 * parser's results all come through here). The node shares the description's `children` and
 * `warnings` lists; nothing is copied.
 */
export function sitemapFromDocument(doc: ParsedDocument, parts: DocumentNodeParts = {}): Sitemap {
  // Each init written out, not `{ ...init, more }`: V8 gives every object made by an object
  // spread a map of its own, so the node constructors' reads of it would all miss their caches.
  const url = doc.url;
  const lastModified = parts.lastModified ?? null;
  const warnings = doc.warnings;
  switch (doc.type) {
    case 'PagesXMLSitemap':
    case 'PagesTextSitemap':
    case 'PagesRSSSitemap':
    case 'PagesAtomSitemap':
      return createPagesSitemap(doc.type, {
        url,
        lastModified,
        warnings,
        stored: parts.stored ?? storedPages([]),
      });
    case 'IndexXMLSitemap':
      parts.stored?.release?.();
      return new IndexXMLSitemap({ url, lastModified, warnings, entries: doc.children });
    case 'IndexRobotsTxtSitemap':
      parts.stored?.release?.();
      return new IndexRobotsTxtSitemap({
        url,
        lastModified,
        warnings,
        robots: doc.robots ?? null,
        entries: doc.children,
      });
    default:
      parts.stored?.release?.();
      return new InvalidSitemap({ url, lastModified, warnings, reason: doc.reason ?? noParserReason(url) });
  }
}
