import { type RunSummaryRows, runSummaryQueries, type SiteResult } from '@usp-ts/batch';
import { connect, createPool, redactUrl } from './connection.js';

/**
 * What `usp report` shows of a store's run: its site rows, its page rows counted by site and
 * change, its sitemap rows counted, read in one read-only transaction. `url` as in
 * `openPostgresStore`; `run` defaults to the run started last.
 */
export async function readRunSummary(url: string | undefined, run = 'latest'): Promise<RunSummaryRows> {
  const where = redactUrl(url);
  const pool = createPool(url, 1);
  pool.on('error', () => {});
  try {
    const client = await connect(pool, where);
    try {
      const q = runSummaryQueries((n) => `$${n}`);
      await client.query('BEGIN READ ONLY');
      const runId = run === 'latest' ? ((await client.query(q.latestRun)).rows[0]?.run_id ?? null) : run;
      if (runId === null) return { runId, sites: [], changes: [], sitemaps: 0 };
      // count(*) and bigint columns come back as strings: numbers here, as the NDJSON rows have them.
      const sites = (await client.query(q.sites, [runId])).rows.map(
        (r): SiteResult => ({ ...r, bytes: Number(r.bytes) }),
      );
      const changes = (await client.query(q.changes, [runId])).rows.map((r) => ({
        site: r.site as string,
        change: r.change as string | null,
        rows: Number(r.rows),
      }));
      const sitemaps = Number((await client.query(q.sitemaps, [runId])).rows[0].n);
      await client.query('COMMIT');
      return { runId, sites, changes, sitemaps };
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
  }
}
