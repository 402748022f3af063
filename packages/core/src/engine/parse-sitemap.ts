import { InvalidOptionError } from '../contract/errors.js';
import { memoryPageStore, type PageStore } from '../contract/page-store.js';
import { type ParsedDocument, sitemapFromDocument } from '../contract/parsed-document.js';
import type { Sitemap } from '../contract/sitemap.js';
import type { SitemapDate } from '../contract/sitemap-date.js';
import { parseDocument } from './document.js';
import { checkParseDocumentOptions, type ParseDocumentOptions } from './document-options.js';

export interface ParseSitemapNodeOptions extends ParseDocumentOptions {
  /** Where the node keeps its pages (default: in memory). */
  pageStore?: PageStore;
  /** The `<lastmod>` the parent index gave this sitemap; put on the node. */
  lastModified?: SitemapDate | null;
}

/** A parsed document with the node it makes. */
export interface ParsedSitemap extends ParsedDocument {
  readonly sitemap: Sitemap;
}

/**
 * `parseDocument` for one document on its own: its pages are kept in `pageStore` (and still
 * handed to `onPages`), and the result carries the node. Same errors as `parseDocument`.
 */
export async function parseSitemap(options: ParseSitemapNodeOptions): Promise<ParsedSitemap> {
  // Not an object: refused with parseDocument's own error.
  if (options === null || typeof options !== 'object') checkParseDocumentOptions(options);
  const { pageStore, lastModified, ...rest } = options;
  // Refused exactly as parseDocument refuses them, before the store opens anything.
  checkParseDocumentOptions(rest);
  if (pageStore !== undefined && typeof pageStore?.open !== 'function') {
    throw new InvalidOptionError('pageStore', 'must be a PageStore (an object with open(url))');
  }
  const onPages = rest.onPages;
  const writer = (pageStore ?? memoryPageStore()).open(rest.url);
  const doc = await parseDocument({
    ...rest,
    onPages: (pages, type, encoded) => {
      for (const p of pages) writer.append(p);
      return onPages?.(pages, type, encoded);
    },
  });
  return { ...doc, sitemap: sitemapFromDocument(doc, { stored: writer.close(), lastModified }) };
}
