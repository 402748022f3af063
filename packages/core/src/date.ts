import type { SitemapDate } from './sitemap-date.js';

/**
 * `<lastmod>`, `<news:publication_date>`, Atom dates: W3C/ISO 8601 on a hand-written fast
 * path, then the looser forms sitemaps carry in the wild. `null` when unparseable.
 * Deterministic: never fills missing fields from "today".
 */
export function parseIsoDate(_text: string): SitemapDate | null {
  throw new Error('not implemented yet');
}

/** RSS `<pubDate>`: RFC 2822 / RFC 1123 first, then the ISO forms. `null` when unparseable. */
export function parseRfc2822Date(_text: string): SitemapDate | null {
  throw new Error('not implemented yet');
}
