/**
 * The sitemaps.org protocol's limits (Google applies the same): a sitemap lists at most 50,000
 * URLs and an index at most 50,000 sitemaps, and a sitemap is at most 50 MB uncompressed. Past
 * them a document is still read whole, with an `over-spec` warning; `usp validate` reports them.
 */
export const MAX_URLS_PER_SITEMAP = 50_000;
/** 50 MB as the protocol counts it: 52,428,800 bytes, uncompressed. */
export const MAX_SITEMAP_BYTES = 52_428_800;
