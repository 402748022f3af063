import { type RunSummaryRows, runSummaryQueries, type SiteResult } from '@usp-ts/batch';
import { openReadOnly, readFailure } from './read-only.js';

/**
 * What `usp report` shows of a run in an SQLite store (`openSqliteStore`'s file): its site rows,
 * its page rows counted by site and change, its sitemap rows counted. `run` defaults to the run
 * started last. The file is opened read-only.
 */
export function readSqliteRunSummary(path: string, run = 'latest'): RunSummaryRows {
  const db = openReadOnly(path);
  try {
    const q = runSummaryQueries(() => '?');
    const runId =
      run === 'latest'
        ? ((db.prepare(q.latestRun).get() as { run_id: string } | undefined)?.run_id ?? null)
        : run;
    if (runId === null) return { runId, sites: [], changes: [], sitemaps: 0 };
    return {
      runId,
      sites: db.prepare(q.sites).all(runId) as SiteResult[],
      changes: db.prepare(q.changes).all(runId) as RunSummaryRows['changes'][number][],
      sitemaps: (db.prepare(q.sitemaps).get(runId) as { n: number }).n,
    };
  } catch (cause) {
    throw readFailure(path, cause);
  } finally {
    db.close();
  }
}
