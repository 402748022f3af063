import type { PageJSON } from '@usp-ts/core';

/**
 * How a page or sitemap compares with the state of the last run. `removed`: a page the sitemap
 * listed last run and no longer lists (only said of a sitemap read to its end, or one its index
 * no longer lists).
 */
export type Change = 'new' | 'changed' | 'unchanged' | 'removed';

/** A page read this run: the page's JSON form (as `usp ls -f ndjson`) with where it came from. */
export type ListedPageRow = {
  readonly site: string;
  readonly sitemap: string;
  readonly change?: Exclude<Change, 'removed'>;
} & PageJSON;

/** A page listed last run that is gone (`change: 'removed'`): only its URL is known. */
export interface RemovedPageRow {
  readonly site: string;
  readonly sitemap: string;
  readonly url: string;
  readonly change: 'removed';
}

/** One page of `pages.ndjson`. */
export type PageRow = ListedPageRow | RemovedPageRow;

/** One sitemap document of `sitemaps.ndjson`. */
export interface SitemapRow {
  readonly site: string;
  /** The URL requested. */
  readonly url: string;
  /** The URL after redirects, when it differs. */
  readonly finalUrl?: string;
  /** The robots.txt or index that listed it; `null` at the top level. */
  readonly parent: string | null;
  readonly type: string;
  /** HTTP status; `null` when there was no answer or no request. */
  readonly status: number | null;
  /** The server answered 304 and the stored document was replayed. */
  readonly notModified: boolean;
  /** Not requested: its index `<lastmod>` had not moved on a site whose `<lastmod>` is honest. */
  readonly skipped: boolean;
  readonly etag: string | null;
  readonly lastModified: string | null;
  readonly bytes: number;
  /** Pages read from it (0 when not read again). */
  readonly pages: number;
  /** From the request (its wait at the politeness gate included) to the end of the body. */
  readonly ms: number;
  /** With a state: how its pages compare with the last run. */
  readonly change?: Change;
  /** Why it is an `InvalidSitemap`. */
  readonly reason?: string;
}

/**
 * How a site walk ended: `ok`; `unreachable` (no HTTP answer at all); `partial` (the site
 * deadline, a budget or an abort cut it after something was read); `invalid` (the input line is
 * not a site URL); `error` (an unexpected failure, said in `reason`).
 */
export type SiteStatus = 'ok' | 'unreachable' | 'partial' | 'invalid' | 'error';

/** One site of `sites.ndjson`, and what the job function returns. Plain data. */
export interface SiteResult {
  /** The normalised homepage URL (the input line as given for `invalid`). */
  readonly site: string;
  readonly status: SiteStatus;
  readonly reason: string | null;
  /** Page rows written for it. */
  readonly pages: number;
  /** Sitemap documents walked (fetched, replayed or failed). */
  readonly sitemaps: number;
  readonly requests: number;
  readonly notModified: number;
  /** Documents not requested thanks to an unchanged index `<lastmod>`. */
  readonly skipped: number;
  readonly bytes: number;
  readonly ms: number;
}
