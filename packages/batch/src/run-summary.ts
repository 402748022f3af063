import type { SiteResult } from './rows.js';

/** What a run's report reads of a result store: its site rows, page rows counted, sitemaps counted. */
export interface RunSummaryRows {
  /** The run read (`latest` resolved), `null` when the store holds no run. */
  readonly runId: string | null;
  readonly sites: readonly SiteResult[];
  /** Page rows per site and change (`null`: rows of a run without a state). */
  readonly changes: readonly { site: string; change: string | null; rows: number }[];
  readonly sitemaps: number;
}

/**
 * The SQL a store runs for `RunSummaryRows`, the same in SQLite and PostgreSQL: each query takes
 * the run id as its one parameter (`placeholder(1)`).
 */
export function runSummaryQueries(placeholder: (n: number) => string): {
  latestRun: string;
  sites: string;
  changes: string;
  sitemaps: string;
} {
  const run = placeholder(1);
  return {
    latestRun: 'SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1',
    sites: `SELECT site, status, reason, pages, sitemaps, requests, not_modified AS "notModified", skipped, bytes, ms FROM site_rows WHERE run_id = ${run} ORDER BY site`,
    changes: `SELECT site, change, count(*) AS rows FROM page_rows WHERE run_id = ${run} GROUP BY site, change`,
    sitemaps: `SELECT count(*) AS n FROM sitemap_rows WHERE run_id = ${run}`,
  };
}
