import { isHttpUrl } from '../engine/url.js';
import { safeKey } from './ancestry.js';
import type { TreeOptions } from './options.js';

/**
 * usp 1.8.1's 14 unpublished sitemap paths, probed relative to the homepage. usp iterates them as
 * a Python set (an order that changes between processes); we probe in this fixed order, which is
 * usp's source order.
 */
export const KNOWN_SITEMAP_PATHS: readonly string[] = Object.freeze([
  'sitemap.xml',
  'sitemap.xml.gz',
  'sitemap_index.xml',
  'sitemap-index.xml',
  'sitemap_index.xml.gz',
  'sitemap-index.xml.gz',
  '.sitemap.xml',
  'sitemap',
  'admin/config/search/xmlsitemap',
  'sitemap/sitemap-index.xml',
  'sitemap_news.xml',
  'sitemap-news.xml',
  'sitemap_news.xml.gz',
  'sitemap-news.xml.gz',
]);

/** WordPress core's sitemap (5.5+), probed after the 14 with `includeWordPressSitemap`. */
export const WORDPRESS_SITEMAP_PATH = 'wp-sitemap.xml';
/** A plain-text sitemap at the root, probed with `includeSitemapTxt`. */
export const SITEMAP_TXT_PATH = 'sitemap.txt';

/** The URLs the walk probes for a homepage (already normalised, ending in `/`), in order. */
export function knownPathUrls(homepage: string, options: Partial<TreeOptions> = {}): string[] {
  const paths = [...(options.knownPaths ?? KNOWN_SITEMAP_PATHS)];
  if (options.includeWordPressSitemap === true) paths.push(WORDPRESS_SITEMAP_PATH);
  if (options.includeSitemapTxt === true) paths.push(SITEMAP_TXT_PATH);
  const urls = paths.map((p) => homepage + p);
  for (const extra of options.extraKnownPaths ?? []) {
    urls.push(isHttpUrl(extra) ? extra : homepage + extra.replace(/^\/+/, ''));
  }
  const seen = new Set<string>();
  return urls.filter((u) => {
    const k = safeKey(u);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
