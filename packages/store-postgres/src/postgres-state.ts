import {
  type RunMark,
  type SitemapState,
  type SiteState,
  type StateStore,
  StateStoreError,
  type UnreachableMark,
} from '@usp-ts/batch';
import { errorText } from '@usp-ts/core';
import type pg from 'pg';
import { beginLocked } from './connection.js';

/**
 * What the results sink shares with the state of the same store: the sites whose walk has begun
 * through the sink, with the run each belongs to (the store's, or a queue's: their state is read as
 * the run before that one left it), and the open transaction of a site being committed, with its
 * run (its state is saved inside it, as that run's version).
 */
export interface SharedRun {
  readonly runId: string;
  readonly begun: Map<string, string>;
  readonly committing: Map<string, { readonly client: pg.PoolClient; readonly run: string }>;
}

type SitemapData = Omit<SitemapState, 'pages'>;

interface SiteRow {
  run_id: string;
  walked_at: string;
  full_walk_at: string;
  probed_at: string;
  lastmod_trust: number;
  unreachable: UnreachableMark | null;
  sitemaps: SitemapData[];
}

/**
 * The state in PostgreSQL. Each site keeps the version saved by the latest run and by the run
 * before it. A walk begun through the store's sink reads the version of the latest *other* run:
 * a second copy of the site in the same run (a worker killed after its commit, the same list
 * enqueued twice) is then computed against the same state as the first, and its rows can replace
 * the first copy's exactly. Read without the sink (a state store alone), the latest version.
 */
export function postgresStateStore(pool: pg.Pool, shared: SharedRun, where: string): StateStore {
  const { runId } = shared;
  /** The run whose version a walk read, by site: its digests are the ones `loadPages` gives. */
  const readFrom = new Map<string, string | null>();
  const fail = (error: unknown): never => {
    if (error instanceof StateStoreError) throw error;
    throw new StateStoreError('io', `state in ${where}: ${errorText(error)}`, { cause: error });
  };
  /** The latest version of a site's state, or the latest of a run other than `notOf`. */
  const versionOf = async (
    q: pg.ClientBase | pg.Pool,
    site: string,
    notOf: string | undefined,
  ): Promise<SiteRow | null> => {
    const r = await q.query(
      `SELECT run_id, walked_at, full_walk_at, probed_at, lastmod_trust, unreachable, sitemaps FROM state_sites
       WHERE site = $1 ${notOf !== undefined ? 'AND run_id <> $2' : ''} ORDER BY seq DESC LIMIT 1`,
      notOf !== undefined ? [site, notOf] : [site],
    );
    return (r.rows[0] as SiteRow | undefined) ?? null;
  };

  const save = async (
    client: pg.ClientBase,
    runId: string,
    state: SiteState,
    mark: RunMark | undefined,
  ): Promise<void> => {
    const site = state.site;
    const from = readFrom.has(site)
      ? (readFrom.get(site) ?? null)
      : ((await versionOf(client, site, undefined))?.run_id ?? null);
    readFrom.delete(site);
    // Digests left out are kept from the version the walk read (a 304 or a skip).
    const keep = state.sitemaps.filter((s) => s.pages === undefined).map((s) => s.url);
    if (from !== runId) {
      await client.query('DELETE FROM state_digests WHERE site = $1 AND run_id = $2', [site, runId]);
      if (from !== null && keep.length > 0) {
        await client.query(
          `INSERT INTO state_digests (site, run_id, url, pages)
           SELECT site, $2, url, pages FROM state_digests WHERE site = $1 AND run_id = $3 AND url = ANY($4)`,
          [site, runId, from, keep],
        );
      }
    } else {
      await client.query(
        'DELETE FROM state_digests WHERE site = $1 AND run_id = $2 AND NOT (url = ANY($3))',
        [site, runId, keep],
      );
    }
    for (const s of state.sitemaps) {
      if (s.pages === undefined || s.pages === null) continue;
      await client.query(
        `INSERT INTO state_digests (site, run_id, url, pages) VALUES ($1, $2, $3, $4)
         ON CONFLICT (site, run_id, url) DO UPDATE SET pages = excluded.pages`,
        [site, runId, s.url, Buffer.from(s.pages.buffer, s.pages.byteOffset, s.pages.byteLength)],
      );
    }
    const sitemaps = state.sitemaps.map(({ pages: _pages, ...data }) => data);
    // Two versions a site: this run's and the one it was computed from. The other versions go in
    // the same statement as this run's upsert (they never include its row), and the mark with them.
    const kept = from === null || from === runId ? [runId] : [runId, from];
    await client.query(
      `WITH d AS (DELETE FROM state_digests WHERE site = $1 AND NOT (run_id = ANY($9))),
         s AS (DELETE FROM state_sites WHERE site = $1 AND NOT (run_id = ANY($9))),
         m AS (INSERT INTO run_marks (run_id, site, offsets) SELECT $10, $1, $11 WHERE $10::text IS NOT NULL
           ON CONFLICT (run_id) DO UPDATE SET site = excluded.site, offsets = excluded.offsets)
       INSERT INTO state_sites (site, run_id, walked_at, full_walk_at, probed_at, lastmod_trust, unreachable, sitemaps)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (site, run_id) DO UPDATE SET seq = nextval(pg_get_serial_sequence('state_sites', 'seq')),
         walked_at = excluded.walked_at, full_walk_at = excluded.full_walk_at, probed_at = excluded.probed_at,
         lastmod_trust = excluded.lastmod_trust, unreachable = excluded.unreachable, sitemaps = excluded.sitemaps`,
      [
        site,
        runId,
        state.walkedAt,
        state.fullWalkAt,
        state.probedAt,
        state.lastmodTrust,
        state.unreachable === null ? null : JSON.stringify(state.unreachable),
        JSON.stringify(sitemaps),
        kept,
        mark?.runId ?? null,
        mark === undefined ? null : JSON.stringify(mark.offsets),
      ],
    );
  };

  return {
    async loadSite(site) {
      try {
        const row = await versionOf(pool, site, shared.begun.get(site));
        if (row === null) {
          readFrom.set(site, null);
          return null;
        }
        readFrom.set(site, row.run_id);
        return {
          site,
          walkedAt: Number(row.walked_at),
          fullWalkAt: Number(row.full_walk_at),
          probedAt: Number(row.probed_at),
          lastmodTrust: row.lastmod_trust,
          unreachable: row.unreachable,
          sitemaps: row.sitemaps,
        };
      } catch (error) {
        return fail(error);
      }
    },
    async loadPages(site, url) {
      try {
        const from = readFrom.has(site)
          ? readFrom.get(site)
          : (await versionOf(pool, site, undefined))?.run_id;
        if (from === undefined || from === null) return null;
        const r = await pool.query(
          'SELECT pages FROM state_digests WHERE site = $1 AND run_id = $2 AND url = $3',
          [site, from, url],
        );
        const pages = r.rows[0]?.pages as Buffer | undefined;
        return pages === undefined ? null : new Uint8Array(pages);
      } catch (error) {
        return fail(error);
      }
    },
    async unreachableSites() {
      try {
        const r = await pool.query(
          `SELECT site FROM (SELECT DISTINCT ON (site) site, unreachable FROM state_sites ORDER BY site, seq DESC) s
           WHERE unreachable IS NOT NULL`,
        );
        return new Set(r.rows.map((row) => row.site as string));
      } catch (error) {
        return fail(error);
      }
    },
    async saveSite(state, mark) {
      // Inside the commit of the site's rows, when the sink of this store is committing it.
      const open = shared.committing.get(state.site);
      if (open !== undefined) return save(open.client, open.run, state, mark).catch(fail);
      let client: pg.PoolClient | undefined;
      try {
        client = await pool.connect();
        const run = shared.begun.get(state.site) ?? runId;
        await beginLocked(client, `${run} ${state.site}`);
        await save(client, run, state, mark);
        await client.query('COMMIT');
      } catch (error) {
        await client?.query('ROLLBACK').catch(() => {});
        fail(error);
      } finally {
        client?.release();
      }
    },
    async lastMark(id) {
      try {
        const r = await pool.query('SELECT site, offsets FROM run_marks WHERE run_id = $1', [id]);
        const row = r.rows[0] as { site: string; offsets: Record<string, number> } | undefined;
        return row === undefined ? null : { runId: id, site: row.site, offsets: row.offsets };
      } catch (error) {
        return fail(error);
      }
    },
    async close() {
      // The pool belongs to the store (`openPostgresStore`).
    },
  };
}
