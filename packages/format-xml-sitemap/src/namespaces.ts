/** The sitemaps.org namespace as the protocol writes it. */
export const SITEMAP_NAMESPACE = 'http://www.sitemaps.org/schemas/sitemap/0.9';

/**
 * Namespaces read as sitemaps.org without a warning. Sites copy the URI with https, a trailing
 * slash or without `www.`, and old Google sitemaps use Google's own 0.84 (and sometimes 0.9) URI.
 */
export const SITEMAP_NAMESPACES: readonly string[] = [
  SITEMAP_NAMESPACE,
  'http://www.sitemaps.org/schemas/sitemap/0.9/',
  'https://www.sitemaps.org/schemas/sitemap/0.9',
  'https://www.sitemaps.org/schemas/sitemap/0.9/',
  'http://sitemaps.org/schemas/sitemap/0.9',
  'http://sitemaps.org/schemas/sitemap/0.9/',
  'https://sitemaps.org/schemas/sitemap/0.9',
  'https://sitemaps.org/schemas/sitemap/0.9/',
  'http://www.google.com/schemas/sitemap/0.84',
  'http://www.google.com/schemas/sitemap/0.84/',
  'http://www.google.com/schemas/sitemap/0.9',
  'http://www.google.com/schemas/sitemap/0.9/',
];

/** hreflang alternates live in the XHTML namespace (`xhtml:link`). */
export const XHTML_NAMESPACE = 'http://www.w3.org/1999/xhtml';

const KNOWN = new Set<string>(SITEMAP_NAMESPACES);

/** Whether `ns` is one of the sitemaps.org namespace spellings above. */
export function isSitemapNamespace(ns: string): boolean {
  return KNOWN.has(ns);
}

/**
 * Whether an element of a urlset or an index is the document's own (`<url>`, `<loc>`, ...): in
 * the root's namespace, in none, or in any sitemaps.org spelling, as documents mix them.
 * Anything else belongs to an extension or is unknown.
 */
export function isOwnNamespace(ns: string, rootNs: string): boolean {
  return ns === rootNs || ns === '' || KNOWN.has(ns);
}
