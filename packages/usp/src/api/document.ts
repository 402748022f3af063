import {
  type DocumentLimits,
  type Gunzip,
  type HeaderLookup,
  headerLookup,
  InvalidSitemap,
  InvalidUrlError,
  isHttpUrl,
  isIndexSitemap,
  type PageStore,
  type ParseDocumentOptions,
  type ParsedSitemap,
  parseSitemap,
  type Registry,
  rejectUnknownOptions,
  type Sitemap,
  type WarningListener,
} from '@usp-ts/core';
import { urlKey } from '@usp-ts/core/engine';
import { nodeGunzip } from '../node/gunzip.js';
import { createDefaultRegistry } from '../plugins/defaults.js';

/** usp's stand-in URL for a document that came from a string (`sitemap_from_str`). */
export const LOCAL_DUMMY_URL = 'http://usp-local-dummy.local/';

/** usp's reason for an index child that a one-document parse does not fetch. */
export const UNFETCHED_CHILD_REASON = 'Un-fetched child sitemap';

export interface ParseSitemapOptions {
  /**
   * Where the document came from (default `http://usp-local-dummy.local/`): a URL ending in
   * `/robots.txt` makes non-XML text robots.txt rather than a plain-text sitemap, and relative
   * links resolve against it.
   */
  url?: string;
  /** Response headers, if the document came over HTTP. */
  headers?: HeaderLookup | Readonly<Record<string, string>>;
  /** Formats to detect (default: every format of this package). */
  registry?: Registry;
  onWarning?: WarningListener;
  limits?: Partial<DocumentLimits>;
  /** Where the pages go (default: memory). */
  pageStore?: PageStore;
  /** Receives pages in batches as they are parsed; awaited (a slow consumer pauses the parse). */
  onPages?: ParseDocumentOptions['onPages'];
  gunzip?: Gunzip;
  signal?: AbortSignal;
  /** `'sax'` reads XML with sax alone instead of the fast path (same result; see core's `ParseDocumentOptions`). */
  xmlTokenizer?: ParseDocumentOptions['xmlTokenizer'];
}

// Every key of the options type, so the table cannot fall behind it.
const PARSE_SITEMAP_OPTIONS = {
  url: true,
  headers: true,
  registry: true,
  onWarning: true,
  limits: true,
  pageStore: true,
  onPages: true,
  gunzip: true,
  signal: true,
  xmlTokenizer: true,
} satisfies Record<keyof ParseSitemapOptions, true>;

/**
 * Parses one document (bytes, text or a byte stream; gzip detected by its magic bytes) without
 * any network access. An index's children are not fetched: each appears in `subSitemaps` as an
 * `InvalidSitemap` with reason "Un-fetched child sitemap", as usp's `sitemap_from_str` does.
 */
export async function parseSitemapDocument(
  body: Uint8Array | string | AsyncIterable<Uint8Array>,
  options: ParseSitemapOptions = {},
): Promise<ParsedSitemap> {
  rejectUnknownOptions(options, PARSE_SITEMAP_OPTIONS);
  const url = options.url ?? LOCAL_DUMMY_URL;
  if (!isHttpUrl(url)) throw new InvalidUrlError(url);
  const headers = typeof options.headers === 'function' ? options.headers : headerLookup(options.headers);
  const parsed = await parseSitemap({
    url,
    body,
    headers,
    registry: options.registry ?? createDefaultRegistry(),
    onWarning: options.onWarning,
    limits: options.limits,
    pageStore: options.pageStore,
    onPages: options.onPages,
    gunzip: options.gunzip ?? nodeGunzip,
    signal: options.signal,
    xmlTokenizer: options.xmlTokenizer,
  });
  const node = parsed.sitemap;
  if (isIndexSitemap(node)) {
    const self = urlKey(node.url);
    for (const ref of parsed.children) {
      // usp rejects a child equal to its parent before it would fetch it.
      const reason =
        urlKey(ref.url) === self
          ? `Unable to add sub-sitemap from URL ${ref.url}: Recursion detected in URL ${ref.url} with parent URLs {'${node.url}'}.`
          : UNFETCHED_CHILD_REASON;
      node.subSitemaps.push(new InvalidSitemap({ url: ref.url, lastModified: ref.lastModified, reason }));
    }
  }
  return parsed;
}

/**
 * usp's `sitemap_from_str`: one document from a string (or bytes), no network. The URL defaults
 * to usp's dummy, so robots.txt text parses as a plain-text sitemap unless `url` says otherwise.
 */
export async function sitemapFromString(
  content: string | Uint8Array,
  options: ParseSitemapOptions = {},
): Promise<Sitemap> {
  return (await parseSitemapDocument(content, options)).sitemap;
}
