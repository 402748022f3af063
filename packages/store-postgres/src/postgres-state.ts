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
import { lockSql } from './connection.js';
import { digestCopy } from './digest-copy.js';
import { type MessagePart, OneMessage } from './one-message.js';
import { literal, textArray } from './sql-text.js';
import { StateReads } from './state-reads.js';

/**
 * What the results sink shares with the state of the same store: the sites whose walk has begun
 * through the sink, with the run each belongs to (the store's, or a queue's: their state is read as
 * the run before that one left it), and the commit of a site being prepared, with its run: its
 * state's statements join the commit's (saved in its transaction, as that run's version).
 */
export interface SharedRun {
  readonly runId: string;
  readonly begun: Map<string, string>;
  readonly committing: Map<string, CommitStatements>;
  /**
   * When `runId` is the store's own (a new id, which nobody else writes to): the sites written
   * under it so far, by a commit of the sink or a save of the state alone. `null` otherwise.
   */
  readonly writtenInOwnRun: Set<string> | null;
}

/** A site's commit being prepared: its run, and the statements (and COPY) its state adds (`saveSql`). */
export interface CommitStatements {
  readonly run: string;
  /** The site's first write in the store's own run (see `postgresResultSink`): nothing of it to remove. */
  readonly first: boolean;
  readonly parts: MessagePart[];
}

/** A sitemap's digest in a version: its own row, or the row it shares (`digests_from`). */
const LOAD_PAGES = `SELECT d.pages FROM state_sites v JOIN state_digests d ON d.site = v.site AND d.url = $3
    AND d.seq = coalesce((v.digests_from ->> $3)::bigint, v.seq)
  WHERE v.site = $1 AND v.run_id = $2`;

/**
 * The state in PostgreSQL. Each site keeps the version saved by the latest run and by the run
 * before it. A walk begun through the store's sink reads the version of the latest *other* run:
 * a second copy of the site in the same run (a worker killed after its commit, the same list
 * enqueued twice) is then computed against the same state as the first, and its rows can replace
 * the first copy's exactly. Read without the sink (a state store alone), the latest version.
 */
export function postgresStateStore(pool: pg.Pool, shared: SharedRun, where: string): StateStore {
  const { runId } = shared;
  /** Sites whose state is being saved outside a commit of the sink (`saveSite` alone), how many times. */
  const saving = new Map<string, number>();
  // A site walked (begun through the sink) or being saved is not read ahead: its state may change.
  const reads = new StateReads(pool, (site) => shared.begun.has(site) || saving.has(site));
  /** The run whose version a walk read, by site: its digests are the ones `loadPages` gives. */
  const readFrom = new Map<string, string | null>();
  const fail = (error: unknown): never => {
    if (error instanceof StateStoreError) throw error;
    throw new StateStoreError('io', `state in ${where}: ${errorText(error)}`, { cause: error });
  };
  /**
   * The statements that save a site's next state as `runId`'s version (`usp_save_state`, with
   * its values as literals: see `sql-text.ts`), then the COPY of its new digests (`digestCopy`),
   * for one transaction. The version it was computed from is the one the walk read, or, for a
   * save without a read, the latest (looked up under the site's lock).
   */
  const saveSql = (runId: string, state: SiteState, mark: RunMark | undefined): MessagePart[] => {
    const site = state.site;
    const fromLatest = !readFrom.has(site);
    const from = readFrom.get(site) ?? null;
    readFrom.delete(site);
    reads.saved(site);
    const fresh = new Map<string, Uint8Array>();
    for (const m of state.sitemaps) if (m.pages != null) fresh.set(m.url, m.pages);
    // Digests left out (a 304 or a skip) are kept from the version the walk read: shared with it.
    const keep = textArray(
      state.sitemaps.filter((m) => m.pages === undefined && !fresh.has(m.url)).map((m) => m.url),
    );
    const sitemaps = state.sitemaps.map(({ pages: _pages, ...data }) => data);
    const args = [
      literal(site),
      literal(runId),
      literal(from),
      fromLatest ? 'true' : 'false',
      ...[state.walkedAt, state.fullWalkAt, state.probedAt, state.lastmodTrust].map(literal),
      state.unreachable === null ? 'NULL' : literal(JSON.stringify(state.unreachable)),
      literal(JSON.stringify(sitemaps)),
      keep,
      mark === undefined ? 'NULL' : literal(mark.runId),
      mark === undefined ? 'NULL' : literal(JSON.stringify(mark.offsets)),
    ];
    const copy = digestCopy(site, fresh);
    const text = `SELECT usp_save_state(${args.join(', ')});`;
    return copy === null ? [text] : [text, copy];
  };

  return {
    async loadSite(site) {
      try {
        const row = await reads.read(pool, site, shared.begun.get(site));
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
          unreachable: row.unreachable as UnreachableMark | null,
          sitemaps: row.sitemaps as SitemapState[],
        };
      } catch (error) {
        return fail(error);
      }
    },
    willLoad(sites) {
      reads.ahead(sites);
    },
    async loadPages(site, url) {
      try {
        const from = readFrom.has(site)
          ? readFrom.get(site)
          : (await reads.read(pool, site, undefined))?.run_id;
        if (from === undefined || from === null) return null;
        // Named: prepared once a connection (an unnamed statement was planned at every read).
        const r = await pool.query({ name: 'usp_load_pages', text: LOAD_PAGES, values: [site, from, url] });
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
      // With the commit of the site's rows, when the sink of this store is committing it.
      const open = shared.committing.get(state.site);
      if (open !== undefined) {
        open.parts.push(...saveSql(open.run, state, mark));
        return;
      }
      let client: pg.PoolClient | undefined;
      let begun = false;
      saving.set(state.site, (saving.get(state.site) ?? 0) + 1);
      try {
        client = await pool.connect();
        const run = shared.begun.get(state.site) ?? runId;
        // A commit of the sink after this save has this run's digests of the site to replace.
        if (run === runId) shared.writtenInOwnRun?.add(state.site);
        const parts = saveSql(run, state, mark);
        begun = true;
        // One round trip: the transaction, the digests' COPY data behind it.
        await client.query(new OneMessage(['BEGIN;', lockSql(`${run} ${state.site}`), ...parts, 'COMMIT;']))
          .done;
      } catch (error) {
        if (begun) await client?.query('ROLLBACK').catch(() => {});
        fail(error);
      } finally {
        const left = (saving.get(state.site) ?? 1) - 1;
        if (left === 0) saving.delete(state.site);
        else saving.set(state.site, left);
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
