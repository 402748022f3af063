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
import { byteaLiteral, literal, textArray } from './sql-text.js';
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

/** A site's commit being prepared: its run, and the statements its state adds (`StateStatements`). */
export interface CommitStatements {
  readonly run: string;
  /** The site's first write in the store's own run (see `postgresResultSink`): nothing of it to remove. */
  readonly first: boolean;
  readonly statements: string[];
  /** Sent after `statements`, before the commit. */
  readonly large: pg.QueryConfig[];
}

/** The statements that save a site's state: `text`, then `large` (parameters), in one transaction. */
interface StateStatements {
  readonly text: string;
  readonly large: pg.QueryConfig[];
}

/** Digests up to this size go in the commit's text as literals (the bytes twice, in hex). */
const LITERAL_DIGEST_BYTES = 64 * 1024;

/** A large digest, as a row of the version `text` saved (so after it). */
const INSERT_DIGEST = `INSERT INTO state_digests (site, seq, url, pages)
  SELECT site, seq, $3, $4 FROM state_sites WHERE site = $1 AND run_id = $2`;

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
   * its values as literals: see `sql-text.ts`). The version it was computed from is the one the
   * walk read, or, for a save without a read, the latest (looked up under the site's lock).
   */
  const saveSql = (runId: string, state: SiteState, mark: RunMark | undefined): StateStatements => {
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
    // A large digest goes as a parameter of its own statement (bytes as they are; as a literal, in
    // hex, a 50,000-page sitemap's took ~7 MB of text, copied several times on its way out).
    const large: pg.QueryConfig[] = [];
    const urls: string[] = [];
    const digests: string[] = [];
    for (const [url, pages] of fresh) {
      if (pages.byteLength <= LITERAL_DIGEST_BYTES) {
        urls.push(url);
        digests.push(byteaLiteral(pages));
      } else {
        const bytes = Buffer.from(pages.buffer, pages.byteOffset, pages.byteLength);
        large.push({ text: INSERT_DIGEST, values: [site, runId, url, bytes] });
      }
    }
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
      textArray(urls),
      urls.length === 0 ? `'{}'::bytea[]` : `ARRAY[${digests.join(', ')}]`,
      mark === undefined ? 'NULL' : literal(mark.runId),
      mark === undefined ? 'NULL' : literal(JSON.stringify(mark.offsets)),
    ];
    const text = `SELECT usp_save_state(${args.join(', ')});`;
    return { text, large };
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
        const r = await pool.query(
          `SELECT d.pages FROM state_sites v JOIN state_digests d ON d.site = v.site AND d.url = $3
             AND d.seq = coalesce((v.digests_from ->> $3)::bigint, v.seq)
           WHERE v.site = $1 AND v.run_id = $2`,
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
      // With the commit of the site's rows, when the sink of this store is committing it.
      const open = shared.committing.get(state.site);
      if (open !== undefined) {
        const { large, text } = saveSql(open.run, state, mark);
        open.large.push(...large);
        open.statements.push(text);
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
        const { large, text } = saveSql(run, state, mark);
        begun = true;
        if (large.length === 0) {
          await beginLocked(client, `${run} ${state.site}`, `${text} COMMIT;`);
        } else {
          await beginLocked(client, `${run} ${state.site}`, text);
          for (const q of large) await client.query(q);
          await client.query('COMMIT');
        }
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
