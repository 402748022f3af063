import type { SiteResult } from '@usp-ts/batch';

/** A site's result row as a commit takes it: one page, nothing else of note. */
export function siteResult(site: string): SiteResult {
  return {
    site,
    status: 'ok',
    reason: null,
    pages: 1,
    sitemaps: 0,
    requests: 1,
    notModified: 0,
    skipped: 0,
    bytes: 1,
    ms: 1,
  };
}
