import { OutputError, PAGE_COLUMNS } from '@usp-ts/batch';
import type Database from 'better-sqlite3';

/** The results' schema version, in `meta` (`results_schema`); an older tool refuses a newer file. */
export const RESULTS_SCHEMA = 3;

/** The page columns after `site`, as `page_data` holds them (its `site_run` names the site). */
export const PAGE_FIELDS = PAGE_COLUMNS.filter((c) => c !== 'site');

const SITE_RUNS = `CREATE TABLE IF NOT EXISTS site_runs (
  id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, site TEXT NOT NULL, UNIQUE (run_id, site)
);`;
/** Schema 2's `page_data`; schema 3 adds `pages` (`MIGRATE_2_TO_3`). */
const PAGE_DATA_2 = `CREATE TABLE IF NOT EXISTS page_data (
  site_run INTEGER NOT NULL, sitemap TEXT NOT NULL, url TEXT NOT NULL,
  last_modified TEXT, change_frequency TEXT, priority REAL, change TEXT,
  news_story TEXT, images TEXT, alternates TEXT, extensions TEXT
);`;
const PAGE_DATA = `CREATE TABLE IF NOT EXISTS page_data (
  site_run INTEGER NOT NULL, sitemap TEXT NOT NULL, url TEXT NOT NULL,
  last_modified TEXT, change_frequency TEXT, priority REAL, change TEXT,
  news_story TEXT, images TEXT, alternates TEXT, extensions TEXT, pages BLOB
);`;

/**
 * A page column of `page_rows`: a row's own, or, for a block row (`pages`), its element's key
 * read as the insert of a row reads it (`->>`), cast to the column's type as the column's affinity
 * stores it (an integer priority is a REAL) and so that the view's column has that affinity as
 * before (`CREATE TABLE … AS SELECT … FROM page_rows` makes the same column types).
 */
const blockColumn = (column: string, key: string, type: 'TEXT' | 'REAL'): string =>
  `CAST(iif(p.pages IS NULL, p.${column}, j.value ->> '${key}') AS ${type}) AS ${column}`;

/**
 * The page rows with schema 1's columns: a block row (`pages` not null) gives one row an element
 * of its array, in order, in its place among the site's rows; any other row, itself.
 */
const PAGE_ROWS = `CREATE VIEW IF NOT EXISTS page_rows AS
  SELECT s.run_id, s.site, p.sitemap, ${blockColumn('url', 'url', 'TEXT')},
    ${blockColumn('last_modified', 'lastModified', 'TEXT')},
    ${blockColumn('change_frequency', 'changeFrequency', 'TEXT')}, ${blockColumn('priority', 'priority', 'REAL')},
    p.change, p.news_story, p.images, p.alternates, p.extensions
  FROM site_runs s JOIN page_data p ON p.site_run = s.id LEFT JOIN jsonb_each(p.pages) j;`;

// The rows of each run, as the NDJSON sink writes them (one table per file), plus `runs`. A site's
// rows carry no copy name of their own: a site has one copy in a run (`site_rows.copy`), and a
// later commit of the same site in the same run replaces all of it.
//
// Schema 2: a page row names its run and site by one integer (`page_data.site_run`, a row of
// `site_runs`) where schema 1 repeated the run's id and the site's URL in every row and in the
// index: half a million such rows a run were most of the removed run's inserts. The view
// `page_rows` gives the rows with `run_id` and `site` as schema 1's table did, for every query.
//
// Schema 3: the unchanged rows of one sitemap a site's walk held back (nearly every row of a run
// after a few pages were removed: 500,000 of 526,000 in the 1,000-site bench) are one row of
// `page_data` a block of up to ~250 (`pages`: a JSONB array of each page's `url`, `priority`,
// `lastModified` and `changeFrequency`; the row's own `sitemap` and `change`, `url` empty, the
// other columns null), not one row a page: a run's inserts were mostly SQLite's B-tree and JSON
// work a row, on the batch's one thread. The view gives every page its row, as before.
const RESULTS_DDL = `
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY, started_at TEXT NOT NULL, ended_at TEXT
);
CREATE TABLE IF NOT EXISTS site_rows (
  run_id TEXT NOT NULL, site TEXT NOT NULL, status TEXT NOT NULL, reason TEXT,
  pages INTEGER NOT NULL, sitemaps INTEGER NOT NULL, requests INTEGER NOT NULL,
  not_modified INTEGER NOT NULL, skipped INTEGER NOT NULL, bytes INTEGER NOT NULL, ms INTEGER NOT NULL,
  copy TEXT, committed_at TEXT NOT NULL,
  PRIMARY KEY (run_id, site)
);
CREATE TABLE IF NOT EXISTS sitemap_rows (
  run_id TEXT NOT NULL, site TEXT NOT NULL, url TEXT NOT NULL, final_url TEXT, parent TEXT,
  type TEXT NOT NULL, status INTEGER, not_modified INTEGER NOT NULL, skipped INTEGER NOT NULL,
  etag TEXT, last_modified TEXT, bytes INTEGER NOT NULL, pages INTEGER NOT NULL, ms INTEGER NOT NULL,
  change TEXT, reason TEXT
);
CREATE INDEX IF NOT EXISTS sitemap_rows_run_site ON sitemap_rows (run_id, site);
${SITE_RUNS}
${PAGE_DATA}
CREATE INDEX IF NOT EXISTS page_data_site_run ON page_data (site_run);
${PAGE_ROWS}
CREATE TABLE IF NOT EXISTS void_copies (copy TEXT PRIMARY KEY);
`;

/**
 * Schema 1's `page_rows` table into schema 2's tables, in the order its rows were written; the
 * view takes the table's name. Runs before `RESULTS_DDL` (whose view needs the name free).
 */
const MIGRATE_1_TO_2 = `
${SITE_RUNS}
INSERT INTO site_runs (run_id, site)
  SELECT run_id, site FROM page_rows GROUP BY run_id, site ORDER BY min(rowid);
${PAGE_DATA_2}
INSERT INTO page_data (site_run, ${PAGE_FIELDS.join(', ')})
  SELECT s.id, ${PAGE_FIELDS.map((c) => `p.${c}`).join(', ')}
  FROM page_rows p JOIN site_runs s ON s.run_id = p.run_id AND s.site = p.site ORDER BY p.rowid;
DROP TABLE page_rows;
UPDATE meta SET value = '2' WHERE key = 'results_schema';
`;

/** Schema 2's `page_data` gains `pages` (no row is rewritten); the view is made again (`RESULTS_DDL`). */
const MIGRATE_2_TO_3 = `
ALTER TABLE page_data ADD COLUMN pages BLOB;
DROP VIEW IF EXISTS page_rows;
UPDATE meta SET value = '3' WHERE key = 'results_schema';
`;

/**
 * Creates, checks or migrates the results tables on an open state database, in one transaction;
 * refuses a file whose results schema is newer than this tool's (one line, nothing changed). A
 * schema 1 or 2 file is migrated in place.
 */
export function prepareResults(db: Database.Database, path: string): void {
  db.transaction(() => {
    const row = db.prepare(`SELECT value FROM meta WHERE key = 'results_schema'`).get() as
      | { value: string }
      | undefined;
    if (row !== undefined && Number(row.value) > RESULTS_SCHEMA) {
      throw new OutputError(
        `${path} holds results schema ${row.value}; this usp reads up to ${RESULTS_SCHEMA}: upgrade usp`,
        path,
      );
    }
    if (row?.value === '1') db.exec(MIGRATE_1_TO_2);
    if (row?.value === '1' || row?.value === '2') db.exec(MIGRATE_2_TO_3);
    db.exec(RESULTS_DDL);
    db.prepare(`INSERT OR IGNORE INTO meta (key, value) VALUES ('results_schema', ?)`).run(
      String(RESULTS_SCHEMA),
    );
  }).immediate();
}
