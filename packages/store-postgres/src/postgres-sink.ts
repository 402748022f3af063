import { pipeline } from 'node:stream/promises';
import {
  type BeginOptions,
  type CommitOptions,
  OutputError,
  PAGE_COLUMNS,
  type PageRow,
  pageValues,
  type RunMark,
  SITE_COLUMNS,
  SITEMAP_COLUMNS,
  type SiteCopy,
  type SiteOutput,
  type SiteResult,
  type SiteSink,
  type StateStore,
  sitemapValues,
  siteValues,
} from '@usp-ts/batch';
import { errorText } from '@usp-ts/core';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { beginLocked } from './connection.js';
import { copyLine } from './copy-text.js';
import type { SharedRun } from './postgres-state.js';

/** The result sink of a PostgreSQL store (`openPostgresStore`). */
export interface PostgresResultSink extends SiteSink {
  readonly runId: string;
  /** Sites committed in this run before this sink was opened (`resume`), or by this sink. */
  readonly done: ReadonlySet<string>;
  /** Waits for the commits in flight. Safe to call twice. */
  close(): Promise<void>;
}

/** Characters of COPY text turned into one Buffer while a site is walked (off the JS heap). */
const PIECE_CHARS = 64 * 1024;

// One statement, one round trip: a site's commit is a dozen of them, and on a run where nothing
// changed they are most of the client's CPU.
const DELETE_SITE = `WITH p AS (DELETE FROM page_rows WHERE run_id = $1 AND site = $2),
  m AS (DELETE FROM sitemap_rows WHERE run_id = $1 AND site = $2)
  DELETE FROM site_rows WHERE run_id = $1 AND site = $2`;

/** `INSERT INTO site_rows` of one row (a COPY costs more than it saves for one line). */
const INSERT_SITE = `INSERT INTO site_rows (run_id, ${[...SITE_COLUMNS, 'copy'].join(', ')})
  VALUES (${Array.from({ length: SITE_COLUMNS.length + 2 }, (_, i) => `$${i + 1}`).join(', ')})`;

async function copyInto(client: pg.ClientBase, table: string, columns: readonly string[], data: Buffer[]) {
  if (data.length === 0) return;
  const stream = client.query(copyFrom(`COPY ${table} (run_id, ${columns.join(', ')}) FROM STDIN`));
  await pipeline(async function* () {
    yield* data;
  }, stream);
}

/**
 * Fencing and replacement, inside the site's transaction: a copy that a later try made void is
 * refused; the copies this one makes void, and any earlier copy of the site in this run, are
 * removed.
 */
async function replaceEarlier(
  client: pg.ClientBase,
  runId: string,
  site: string,
  copy: SiteCopy | undefined,
  where: string,
): Promise<void> {
  if (copy !== undefined) {
    const stale = await client.query('SELECT 1 FROM void_copies WHERE copy = $1', [copy.token]);
    if (stale.rowCount !== 0) {
      throw new OutputError(
        `the copy of ${site} from try ${copy.token} was replaced by a later try; it was not kept`,
        where,
      );
    }
    if (copy.voids.length > 0) {
      await client.query('INSERT INTO void_copies (copy) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING', [
        copy.voids,
      ]);
      const voided = await client.query('SELECT run_id, site FROM site_rows WHERE copy = ANY($1)', [
        copy.voids,
      ]);
      for (const r of voided.rows as { run_id: string; site: string }[]) {
        await client.query(DELETE_SITE, [r.run_id, r.site]);
      }
    }
  }
  await client.query(DELETE_SITE, [runId, site]);
}

/**
 * The rows of a run in PostgreSQL: a site's rows are held (as COPY text, in 64 KiB pieces) until
 * its walk ends, then written in one transaction (COPY) with its result row and, when the state
 * is this store's, its next state. Commits of one site are serialised across workers by an
 * advisory lock, so the last copy of a site in a run is the one kept. A site begun with a `run`
 * (a queue's) is filed under that run instead of the store's.
 */
export function postgresResultSink(
  pool: pg.Pool,
  shared: SharedRun,
  done: Set<string>,
  where: string,
  ownState: StateStore,
): PostgresResultSink {
  const { runId } = shared;
  const inFlight = new Set<Promise<void>>();
  /** Runs whose row in `runs` a commit of this sink made durable. */
  const recorded = new Set<string>();
  let closed = false;
  const commitSite = async (
    run: string,
    site: string,
    pages: Buffer[],
    sitemaps: Buffer[],
    result: SiteResult,
    saveState: ((mark: RunMark) => Promise<void>) | undefined,
    fence: CommitOptions['fence'],
  ): Promise<void> => {
    if (closed) throw new OutputError('the output was closed before the site was committed', where);
    // A stale copy is refused here, before a connection is taken; one made void meanwhile, in the transaction.
    const copy = await fence?.();
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (cause) {
      throw new OutputError(`cannot connect to ${where}: ${errorText(cause)}`, where, { cause });
    }
    try {
      try {
        await beginLocked(client, `${run} ${site}`);
        // Once a run is recorded, its later sites need not ask again.
        if (!recorded.has(run)) {
          await client.query('INSERT INTO runs (run_id) VALUES ($1) ON CONFLICT (run_id) DO NOTHING', [run]);
        }
        await replaceEarlier(client, run, site, copy, where);
        await copyInto(client, 'page_rows', PAGE_COLUMNS, pages);
        await copyInto(client, 'sitemap_rows', SITEMAP_COLUMNS, sitemaps);
        await client.query(INSERT_SITE, [run, ...siteValues(result), copy?.token ?? null]);
      } catch (cause) {
        if (cause instanceof OutputError) throw cause;
        throw new OutputError(`cannot write to ${where}: ${errorText(cause)}`, where, { cause });
      }
      shared.committing.set(site, { client, run });
      try {
        await saveState?.({ runId: run, site: result.site, offsets: {} });
      } finally {
        shared.committing.delete(site);
      }
      await client.query('COMMIT');
      recorded.add(run);
      if (run === runId) done.add(result.site);
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
      shared.begun.delete(site);
    }
  };
  return {
    runId,
    done,
    ownState,
    begin(site: string, options?: BeginOptions): SiteOutput {
      const run = options?.run ?? runId;
      shared.begun.set(site, run);
      let text = '';
      let pages: Buffer[] = [];
      let sitemaps = '';
      return {
        page(row: PageRow) {
          text += copyLine(run, pageValues(row));
          if (text.length >= PIECE_CHARS) {
            pages.push(Buffer.from(text));
            text = '';
          }
        },
        sitemap(row) {
          sitemaps += copyLine(run, sitemapValues(row));
        },
        commit(result: SiteResult, options?: CommitOptions) {
          if (text !== '') pages.push(Buffer.from(text));
          const held = pages;
          text = '';
          pages = [];
          const p = commitSite(
            run,
            site,
            held,
            sitemaps === '' ? [] : [Buffer.from(sitemaps)],
            result,
            options?.saveState,
            options?.fence,
          );
          sitemaps = '';
          const tracked = p.catch(() => {});
          inFlight.add(tracked);
          void tracked.then(() => inFlight.delete(tracked));
          return p;
        },
        discard() {
          text = '';
          pages = [];
          sitemaps = '';
          shared.begun.delete(site);
        },
      };
    },
    async close() {
      if (closed) return;
      await Promise.all(inFlight);
      closed = true;
    },
  };
}
