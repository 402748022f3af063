import {
  type BeginOptions,
  type CommitOptions,
  OutputError,
  type PageRow,
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
  TextPieces,
  UnchangedBlocks,
} from '@usp-ts/batch';
import { errorText } from '@usp-ts/core';
import type pg from 'pg';
import { CommitGroups } from './commit-groups.js';
import { connect, lockSql } from './connection.js';
import { COPY_PAGE_COLUMNS, copyLineOfJson, pageCopyLine } from './copy-text.js';
import { type CopyIn, type MessagePart, OneMessage } from './one-message.js';
import { blockCopyLine } from './page-blocks.js';
import type { CommitStatements, SharedRun } from './postgres-state.js';
import { failIf, insertRows, literal, rowOf, textArray } from './sql-text.js';

/** The result sink of a PostgreSQL store (`openPostgresStore`). */
export interface PostgresResultSink extends SiteSink {
  readonly runId: string;
  /** Sites committed in this run before this sink was opened (`resume`), or by this sink. */
  readonly done: ReadonlySet<string>;
  /** Waits for the commits in flight. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * A site's COPY text made bytes every 16 Ki characters while it is walked (off the JS heap), into
 * shared 64 KiB Buffers. The lines waiting for their piece survive the scavenges that come
 * meanwhile; at 64 Ki characters a fresh run's client CPU was 1.11x (1.06-1.16) what it is at 16 Ki
 * (three alternated pairs).
 */
const COPY_PIECES = { pieceChars: 16 * 1024, chunkBytes: 64 * 1024 };

/** The earlier copy of a site in a run, in the three row tables (the page rows by their key). */
function deleteSiteSql(run: string, site: string): string {
  const where = `run_id = ${literal(run)} AND site = ${literal(site)}`;
  return `DELETE FROM page_data WHERE site_run = (SELECT id FROM site_runs WHERE ${where});
DELETE FROM sitemap_rows WHERE ${where}; DELETE FROM site_rows WHERE ${where};`;
}

/** Said by the server when a commit's copy was made void by a later try (`fenceSql`). */
const STALE = 'usp: a later try made this copy void';

/**
 * Fencing, inside the site's transaction: a copy that a later try made void is refused; the
 * copies this one makes void are recorded as void and their rows removed.
 */
function fenceSql(copy: SiteCopy): string {
  const sql = [failIf(`EXISTS (SELECT 1 FROM void_copies WHERE copy = ${literal(copy.token)})`, STALE)];
  if (copy.voids.length > 0) {
    const voids = textArray(copy.voids);
    sql.push(
      `INSERT INTO void_copies (copy) SELECT unnest(${voids}) ON CONFLICT DO NOTHING;`,
      `DELETE FROM page_data r USING site_rows s, site_runs k
        WHERE s.copy = ANY(${voids}) AND k.run_id = s.run_id AND k.site = s.site AND r.site_run = k.id;`,
      `DELETE FROM sitemap_rows r USING site_rows s
        WHERE s.copy = ANY(${voids}) AND r.run_id = s.run_id AND r.site = s.site;`,
      `DELETE FROM site_rows WHERE copy = ANY(${voids});`,
    );
  }
  return sql.join('\n');
}

/**
 * A COPY of the page rows of `site` in `run`: their key (`site_runs`, schema 4) as the
 * transaction's `usp.site_run`, the column's default, then the COPY, whose data follows the
 * commit's query (`OneMessage`).
 */
const copySql = (run: string, site: string): string =>
  `SELECT set_config('usp.site_run', usp_site_run(${literal(run)}, ${literal(site)})::text, true);
COPY page_data (${COPY_PAGE_COLUMNS.join(', ')}) FROM STDIN`;

interface SiteCommit {
  readonly run: string;
  readonly site: string;
  /** COPY text of the page rows (`COPY_PAGE_COLUMNS`: their site is the commit's). */
  readonly pages: Buffer[];
  /** COPY text of page rows filed under other sites, by site (none from a walk). */
  readonly others: ReadonlyMap<string, Buffer[]>;
  /** `rowOf` the sitemap rows. */
  readonly sitemaps: string[];
  readonly result: SiteResult;
  readonly saveState: ((mark: RunMark) => Promise<void>) | undefined;
  readonly fence: CommitOptions['fence'];
  /** The site's first write in the store's own run: nothing of it can be there to remove. */
  readonly first: boolean;
  /** The first write's commit of the same site, still in flight: this one goes after it. */
  readonly after: Promise<void> | undefined;
}

/**
 * A site's commit in two parts: `head` opens the transaction (the lock, the run's row, the
 * fencing, the removal of an earlier copy unless this is the site's first write in the store's own
 * run), `tail` writes the sitemap and site rows and the state (`state.parts`: its statement, and
 * the COPY of its digests). The page rows go by COPY between them, then `COMMIT`.
 */
function commitText(
  c: SiteCommit,
  copy: SiteCopy | undefined,
  recordRun: boolean,
  state: CommitStatements,
): { head: string; tail: MessagePart[] } {
  const head = [
    'BEGIN;',
    lockSql(`${c.run} ${c.site}`),
    recordRun ? `INSERT INTO runs (run_id) VALUES (${literal(c.run)}) ON CONFLICT (run_id) DO NOTHING;` : '',
    copy === undefined ? '' : fenceSql(copy),
    state.first ? '' : deleteSiteSql(c.run, c.site),
  ];
  const site = rowOf([c.run, ...siteValues(c.result), copy?.token ?? null]);
  const tail = [
    insertRows('sitemap_rows', ['run_id', ...SITEMAP_COLUMNS], c.sitemaps),
    insertRows('site_rows', ['run_id', ...SITE_COLUMNS, 'copy'], [site]),
    ...state.parts,
  ];
  return { head: head.join('\n'), tail };
}

const hasPages = (c: SiteCommit): boolean => c.pages.length > 0 || c.others.size > 0;

/** The error a site's commit gives its caller: a fencing refusal, or the server's. */
function commitFailure(site: string, copy: SiteCopy | undefined, where: string): (cause: unknown) => Error {
  return (cause) => {
    if ((cause as Error)?.message === STALE) {
      return new OutputError(
        `the copy of ${site} from try ${copy?.token} was replaced by a later try; it was not kept`,
        where,
      );
    }
    return new OutputError(`cannot write to ${where}: ${errorText(cause)}`, where, { cause });
  };
}

/**
 * Sends a commit: a site without page rows or digests as one text (with other sites' when
 * commits queue up: `CommitGroups`); otherwise the head, the page rows' COPYs and the tail as one
 * message (`OneMessage`: one round trip).
 */
async function send(
  pool: pg.Pool,
  groups: CommitGroups,
  where: string,
  c: SiteCommit,
  text: { head: string; tail: readonly MessagePart[] },
  copy: SiteCopy | undefined,
): Promise<void> {
  const failure = commitFailure(c.site, copy, where);
  const tail = text.tail.filter((p) => p !== '');
  if (!hasPages(c) && tail.every((p) => typeof p === 'string')) {
    return groups.commit({ text: [text.head, ...tail, 'COMMIT;'].join('\n'), failure });
  }
  const copies: CopyIn[] = [];
  if (c.pages.length > 0) copies.push({ sql: copySql(c.run, c.site), data: c.pages });
  for (const [site, data] of c.others) copies.push({ sql: copySql(c.run, site), data });
  const client = await connect(pool, where);
  try {
    await client.query(new OneMessage([text.head, ...copies, ...tail, 'COMMIT;'])).done;
  } catch (cause) {
    await client.query('ROLLBACK').catch(() => {});
    throw failure(cause);
  } finally {
    client.release();
  }
}

/**
 * The rows of a run in PostgreSQL: a site's rows are held (as COPY text, in 64 KiB Buffers) until
 * its walk ends, then written in one transaction (COPY) with its result row and, when the state
 * is this store's, its next state. Commits of one site are serialised across workers by an
 * advisory lock, so the last copy of a site in a run is the one kept. A site begun with a `run`
 * (a queue's) is filed under that run instead of the store's.
 *
 * When the store's run is a new id of its own (`shared.writtenInOwnRun`), which nobody else writes
 * to, a site's first write in it removes no earlier copy (four statements fewer, about a fifth of
 * the server's work on a site where nothing changed), and a later commit of the same site waits
 * for the first to end.
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
  const written = shared.writtenInOwnRun;
  /** The first commit of a site in the own run, while in flight (settled, never rejecting). */
  const firsts = new Map<string, Promise<void>>();
  // The pool's other connections are left to the state reads and the COPY commits.
  const groups = new CommitGroups(pool, where);
  /** Runs whose row in `runs` a commit of this sink made durable. */
  const recorded = new Set<string>();
  let closed = false;
  const commitSite = async (c: SiteCommit): Promise<void> => {
    const { run, site, result } = c;
    try {
      // Its earlier copy is then there to remove (the first write sent no removal of its own).
      if (c.after !== undefined) await c.after;
      if (closed) throw new OutputError('the output was closed before the site was committed', where);
      // A stale copy is refused here, before a connection is taken; one made void meanwhile, in the transaction.
      const copy = await c.fence?.();
      // The state's statements (this store's state) join the commit's: nothing is sent before they are known.
      const state: CommitStatements = { run, first: c.first, parts: [] };
      shared.committing.set(site, state);
      try {
        await c.saveState?.({ runId: run, site: result.site, offsets: {} });
      } finally {
        shared.committing.delete(site);
      }
      const text = commitText(c, copy, !recorded.has(run), state);
      await send(pool, groups, where, c, text, copy);
      recorded.add(run);
      if (run === runId) done.add(result.site);
    } finally {
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
      const pages = new TextPieces('utf8', COPY_PIECES);
      /** Lines of rows of another site than `site` (none from a walk), by site. */
      let others = new Map<string, string[]>();
      let sitemaps: string[] = [];
      const page = (row: PageRow): void => {
        if (row.site === site) {
          pages.add(pageCopyLine(row));
          return;
        }
        const lines = others.get(row.site) ?? [];
        if (lines.length === 0) others.set(row.site, lines);
        lines.push(pageCopyLine(row));
      };
      // A row's COPY line made from its JSON text; a text this does not read, from the row parsed.
      const pageLine = (json: string): void => {
        const line = copyLineOfJson(json, site);
        if (line !== null) pages.add(line);
        else page(JSON.parse(json) as PageRow);
      };
      const blocks = new UnchangedBlocks(site, 'utf8');
      return {
        page,
        pageLine,
        // A block of plain unchanged rows of one sitemap as one row (schema 6); any other, row by row.
        pageLines(text: Buffer, rows: number) {
          const block = blockCopyLine(text, rows, blocks);
          if (block !== null) {
            pages.add(block);
            return;
          }
          const lines = text.toString('utf8').split('\n');
          lines.pop();
          for (const line of lines) pageLine(line);
        },
        sitemap(row) {
          sitemaps.push(rowOf([run, ...sitemapValues(row)]));
        },
        commit(result: SiteResult, options?: CommitOptions) {
          // A copy: `clear` empties the list `pieces` returns.
          const held = [...pages.pieces()];
          pages.clear();
          const other = new Map([...others].map(([s, lines]) => [s, [Buffer.from(lines.join(''))]]));
          others = new Map();
          const own = written !== null && run === runId;
          const first = own && !written.has(site);
          if (own) written.add(site);
          const p = commitSite({
            run,
            site,
            pages: held,
            others: other,
            sitemaps,
            result,
            saveState: options?.saveState,
            fence: options?.fence,
            first,
            after: first ? undefined : firsts.get(site),
          });
          sitemaps = [];
          const tracked = p.catch(() => {});
          inFlight.add(tracked);
          if (first) firsts.set(site, tracked);
          void tracked.then(() => {
            inFlight.delete(tracked);
            if (firsts.get(site) === tracked) firsts.delete(site);
          });
          return p;
        },
        discard() {
          pages.clear();
          others = new Map();
          sitemaps = [];
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
