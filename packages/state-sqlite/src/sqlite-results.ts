import { randomUUID } from 'node:crypto';
import {
  type ColumnValue,
  type CommitOptions,
  OutputError,
  type PageRow,
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
import type Database from 'better-sqlite3';
import { PageArrays } from './page-arrays.js';
import { PAGE_FIELDS } from './results-schema.js';

export { prepareResults, RESULTS_SCHEMA } from './results-schema.js';

export interface SqliteResultsOptions {
  /** Go on with the last run the file holds that did not end (its committed sites are `done`). */
  readonly resume?: boolean;
  /**
   * The state store on the same file, when the sink owns it: its saves are savepoints of the
   * sink's commits (a queue worker hands them to the commit).
   */
  readonly ownState?: StateStore;
}

/** The result sink of an SQLite store (`openSqliteStore`). */
export interface SqliteResultSink extends SiteSink {
  /** This run's id (a new one, or the resumed run's). */
  readonly runId: string;
  /** Sites (and invalid lines) committed by an earlier part of this run. */
  readonly done: ReadonlySet<string>;
  /**
   * Waits for commits in flight and marks the run as ended, unless `ended: false` (a run stopped
   * before its end: Ctrl-C, a full disk), which `resume` can then go on with. Safe to call twice.
   */
  close(options?: CloseRunOptions): Promise<void>;
}

/** How a run's store is closed. */
export interface CloseRunOptions {
  /** The run is over (default `true`); `false` leaves it unfinished, for `resume` to go on with. */
  readonly ended?: boolean;
}

/**
 * The page rows of a JSON array of them (each `JSON.stringify` of a `PageRow`, the array's UTF-8
 * bytes bound as a blob: `PageArrays`; all of the site whose `site_runs` id is bound first), inserted in one statement: SQLite parses the text, in C,
 * into the columns `pageValues` gives (`->>` yields a key's scalar, SQL NULL for a JSON null or a
 * missing key, so a removed row's other columns are NULL; `json_extract` of an object or array is
 * its JSON text as written, i.e. `JSON.stringify` of it). The rows reach the sink as text, and in
 * a run after a few pages were removed nearly all of them were held as lines and parsed back into
 * objects, then into values bound one at a time. jsonb_each hands each element over as JSONB,
 * which `->>` reads without parsing it again (json_each's elements are text, parsed again per
 * column: about twice the CPU of binding values row by row).
 */
const INSERT_PAGES = `INSERT INTO page_data (site_run, ${PAGE_FIELDS.join(', ')})
SELECT ?, value->>'sitemap', value->>'url', value->>'lastModified',
  value->>'changeFrequency', value->>'priority', value->>'change',
  json_extract(value, '$.newsStory'), json_extract(value, '$.images'),
  json_extract(value, '$.alternates'), json_extract(value, '$.extensions')
FROM jsonb_each(CAST(? AS TEXT))`;

/**
 * The same for rows without news, images, alternates or extension data (`PageArrays`): each key
 * read walks the row's keys from the first, and these four are the last ones (measured with
 * callgrind, 80,000 rows: the lookups were most of the insert's instructions).
 */
const INSERT_PLAIN_PAGES = `INSERT INTO page_data (site_run, ${PAGE_FIELDS.join(', ')})
SELECT ?, value->>'sitemap', value->>'url', value->>'lastModified',
  value->>'changeFrequency', value->>'priority', value->>'change', NULL, NULL, NULL, NULL
FROM jsonb_each(CAST(? AS TEXT))`;

/**
 * Held unchanged rows of one sitemap handed over in bulk, cut to the keys that vary
 * (`PageArrays.addLines`), as one block row (results schema 3: `page_data.pages`, read through
 * `page_rows`): the site and the sitemap bound, the change written here, the array kept as JSONB
 * (which checks it is JSON, as the other inserts' `jsonb_each` does). One row a block rather than a
 * row a page: the rows of a run after a few pages were removed are nearly all of this form.
 */
const INSERT_UNCHANGED_BLOCK = `INSERT INTO page_data (site_run, sitemap, url, change, pages)
VALUES (?, ?, '', 'unchanged', jsonb(CAST(? AS TEXT)))`;

const placeholders = (n: number): string => `(${Array.from({ length: n + 1 }, () => '?').join(', ')})`;

/**
 * The rows of a run in the SQLite file: a site's rows are held until its walk ends, then written
 * in one transaction together with its result row and (through `saveState`, a savepoint of the
 * same transaction when the state lives in this file) its next state. No journal: a killed run
 * leaves whole sites or none, and `resume` takes up the sites not committed.
 */
export function sqliteResultSink(
  db: Database.Database,
  path: string,
  options: SqliteResultsOptions = {},
): SqliteResultSink {
  let runId: string;
  const done = new Set<string>();
  if (options.resume === true) {
    const last = db
      .prepare(`SELECT run_id FROM runs WHERE ended_at IS NULL ORDER BY started_at DESC, rowid DESC LIMIT 1`)
      .pluck()
      .get() as string | undefined;
    if (last === undefined) {
      throw new OutputError(`${path} holds no unfinished run to resume; run without --resume`, path);
    }
    runId = last;
    for (const site of db.prepare(`SELECT site FROM site_rows WHERE run_id = ?`).pluck().all(runId)) {
      done.add(site as string);
    }
  } else {
    runId = randomUUID();
    db.prepare(`INSERT INTO runs (run_id, started_at) VALUES (?, ?)`).run(runId, new Date().toISOString());
  }
  const insertPage = db.prepare(
    `INSERT INTO page_data (site_run, ${PAGE_FIELDS.join(', ')}) VALUES ${placeholders(PAGE_FIELDS.length)}`,
  );
  const getSiteRun = db.prepare(`SELECT id FROM site_runs WHERE run_id = ? AND site = ?`).pluck();
  const addSiteRun = db.prepare(`INSERT INTO site_runs (run_id, site) VALUES (?, ?)`);
  /** The `site_runs` id of a site in this run, made on its first commit. */
  const siteRun = (site: string): number =>
    (getSiteRun.get(runId, site) as number | undefined) ??
    Number(addSiteRun.run(runId, site).lastInsertRowid);
  /** The insert of each form of `PageArray`. */
  const inserts = {
    rows: db.prepare(INSERT_PAGES),
    plain: db.prepare(INSERT_PLAIN_PAGES),
    unchanged: db.prepare(INSERT_UNCHANGED_BLOCK),
  } as const;
  const insertSitemap = db.prepare(
    `INSERT INTO sitemap_rows (run_id, ${SITEMAP_COLUMNS.join(', ')}) VALUES ${placeholders(SITEMAP_COLUMNS.length)}`,
  );
  const insertSite = db.prepare(
    `INSERT INTO site_rows (run_id, ${SITE_COLUMNS.join(', ')}, copy, committed_at)
     VALUES ${placeholders(SITE_COLUMNS.length + 2)}`,
  );
  const deleteSite = [
    db.prepare(
      `DELETE FROM page_data WHERE site_run IN (SELECT id FROM site_runs WHERE run_id = ? AND site = ?)`,
    ),
    db.prepare(`DELETE FROM sitemap_rows WHERE run_id = ? AND site = ?`),
    db.prepare(`DELETE FROM site_rows WHERE run_id = ? AND site = ?`),
  ];
  const isVoid = db.prepare(`SELECT 1 FROM void_copies WHERE copy = ?`).pluck();
  const addVoid = db.prepare(`INSERT OR IGNORE INTO void_copies (copy) VALUES (?)`);
  const voidedSites = db.prepare(`SELECT run_id, site FROM site_rows WHERE copy = ?`);
  const endRun = db.prepare(`UPDATE runs SET ended_at = ? WHERE run_id = ?`);

  /** Everything but the state, inside the open transaction; throws when the copy is void. */
  const write = (
    site: string,
    pages: PageArrays,
    sitemaps: ColumnValue[][],
    result: SiteResult,
    copy: SiteCopy | undefined,
  ): void => {
    if (copy !== undefined) {
      if (isVoid.get(copy.token) !== undefined) {
        throw new OutputError(
          `the copy of ${site} from try ${copy.token} was replaced by a later try; it was not kept`,
          path,
        );
      }
      for (const token of copy.voids) {
        addVoid.run(token);
        for (const r of voidedSites.all(token) as { run_id: string; site: string }[]) {
          for (const d of deleteSite) d.run(r.run_id, r.site);
        }
      }
    }
    // A later copy of the site in this run replaces the earlier one.
    for (const d of deleteSite) d.run(runId, site);
    const id = siteRun(site);
    for (const a of pages.arrays()) {
      if (a.values !== undefined) {
        const [rowSite, ...fields] = a.values;
        insertPage.run(rowSite === site ? id : siteRun(rowSite as string), ...fields);
      } else if (a.form === 'unchanged') inserts.unchanged.run(id, a.sitemap, a.bytes);
      else inserts[a.form].run(id, a.bytes);
    }
    for (const v of sitemaps) insertSitemap.run(runId, ...v);
    insertSite.run(runId, ...siteValues(result), copy?.token ?? null, new Date().toISOString());
  };

  let chain: Promise<void> = Promise.resolve();
  let closed = false;
  return {
    runId,
    done,
    ...(options.ownState !== undefined ? { ownState: options.ownState } : {}),
    begin(site: string): SiteOutput {
      // Page rows as their JSON text, which SQLite takes apart (INSERT_PAGES): no row object.
      const pages = new PageArrays(site);
      let sitemaps: ColumnValue[][] = [];
      return {
        page: (row: PageRow, json?: string) => {
          pages.add(json ?? JSON.stringify(row));
        },
        pageLine: (json: string) => {
          pages.add(json);
        },
        pageLines: (text: Buffer, rows: number) => {
          pages.addLines(text, rows);
        },
        sitemap: (row) => {
          sitemaps.push(sitemapValues(row));
        },
        commit(result: SiteResult, options?: CommitOptions) {
          const run = async (): Promise<void> => {
            if (closed) throw new OutputError('the output was closed before the site was committed', path);
            // A stale copy is refused here, before the transaction; one made void meanwhile, in it.
            const copy = await options?.fence?.();
            try {
              db.exec('BEGIN IMMEDIATE');
            } catch (cause) {
              throw new OutputError(`cannot write to ${path}: ${errorText(cause)}`, path, { cause });
            }
            try {
              try {
                write(site, pages, sitemaps, result, copy);
              } catch (cause) {
                if (cause instanceof OutputError) throw cause;
                throw new OutputError(`cannot write to ${path}: ${errorText(cause)}`, path, { cause });
              }
              pages.clear();
              sitemaps = [];
              await options?.saveState?.({ runId, site: result.site, offsets: {} });
              db.exec('COMMIT');
            } catch (error) {
              if (db.inTransaction) db.exec('ROLLBACK');
              throw error;
            }
            done.add(result.site);
          };
          const next = chain.then(run);
          chain = next.catch(() => {});
          return next;
        },
        discard() {
          pages.clear();
          sitemaps = [];
        },
      };
    },
    async close(closing: CloseRunOptions = {}) {
      if (closed) return;
      await chain;
      closed = true;
      if (closing.ended !== false) endRun.run(new Date().toISOString(), runId);
    },
  };
}
