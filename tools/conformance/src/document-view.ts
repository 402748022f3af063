import { isIndexSitemap, type ParsedSitemap, type SitemapJSON, sitemapToJSON } from '@usp-ts/core';

/** usp's reason for a child sitemap it could not fetch because there was no web client. */
export const UNFETCHED_CHILD_REASON = 'Un-fetched child sitemap';

/**
 * The shape of a document case's golden (corpus README section 3) built from one
 * `parseDocument` result: usp's `SitemapFetcher` without a web client turns every child of an
 * index into `InvalidSitemap("Un-fetched child sitemap")`, except a child naming the document
 * itself, which its recursion check rejects first.
 */
export function documentView(parsed: ParsedSitemap): SitemapJSON {
  const json = sitemapToJSON(parsed.sitemap);
  if (!isIndexSitemap(parsed.sitemap)) return json;
  const self = parsed.sitemap.url;
  json.subSitemaps = parsed.children.map((child) => ({
    type: 'InvalidSitemap',
    url: child.url,
    reason:
      child.url === self
        ? `Unable to add sub-sitemap from URL ${child.url}: Recursion detected in URL ${child.url}`
        : UNFETCHED_CHILD_REASON,
  }));
  return json;
}
