import { accessSync, constants, existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import {
  type RunMark,
  type SitemapState,
  type SiteState,
  type StateStore,
  StateStoreError,
  type UnreachableMark,
} from '@usp-ts/batch';
import { errorText } from '@usp-ts/core';
import Database from 'better-sqlite3';

export interface SqliteStateStoreOptions {
  /** How long to wait for another process's lock before failing, in ms (default 200). */
  readonly busyTimeoutMs?: number;
}

const APP = 'usp-batch-state';
const SCHEMA_VERSION = '3';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sites (
  site TEXT PRIMARY KEY, walked_at INTEGER NOT NULL, full_walk_at INTEGER NOT NULL, probed_at INTEGER NOT NULL,
  lastmod_trust INTEGER NOT NULL, unreachable TEXT
);
CREATE TABLE IF NOT EXISTS sitemaps (
  site TEXT NOT NULL, url TEXT NOT NULL, data TEXT NOT NULL, pages BLOB,
  PRIMARY KEY (site, url)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS page_digests (
  site TEXT NOT NULL, url TEXT NOT NULL, pages BLOB NOT NULL,
  PRIMARY KEY (site, url)
);
CREATE TABLE IF NOT EXISTS run_marks (run_id TEXT PRIMARY KEY, site TEXT NOT NULL, offsets TEXT NOT NULL);
`;

type SitemapData = Omit<SitemapState, 'pages'>;

/*
 * Schema 2 keeps the page digests (16 bytes a page) out of the \`sitemaps\` rows, in
 * \`page_digests\`: a run where nothing changed rewrites each sitemap's small row (its validators
 * and fetch time move on a 304) but none of the digests, so it writes O(sitemaps), not O(pages).
 * \`sitemaps.pages\` stays in the table (always NULL) so that a schema 1 file migrates in place.
 */
const MIGRATE_1_TO_2 = `
INSERT INTO page_digests (site, url, pages) SELECT site, url, pages FROM sitemaps WHERE pages IS NOT NULL;
UPDATE sitemaps SET pages = NULL WHERE pages IS NOT NULL;
UPDATE meta SET value = '2' WHERE key = 'schema';
`;

/*
 * Schema 3 records a site that gave no answer (\`SiteState.unreachable\`, JSON), so that the
 * next run probes it once instead of walking it with full timeouts and retries.
 */
const MIGRATE_2_TO_3 = `
ALTER TABLE sites ADD COLUMN unreachable TEXT;
UPDATE meta SET value = '3' WHERE key = 'schema';
`;

/** The schemas this version opens; older ones are migrated in place, in one transaction. */
const READABLE = new Set(['1', '2', SCHEMA_VERSION]);

/** SQLite's codes for "another connection holds the lock". */
const BUSY = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED']);
const CORRUPT = new Set(['SQLITE_NOTADB', 'SQLITE_CORRUPT']);

/** A sitemap's state without its page digest: what its `sitemaps` row holds. */
function withoutPages(s: SitemapState): SitemapData {
  const { pages: _, ...data } = s;
  return data;
}

function problemOf(error: unknown, path: string): StateStoreError {
  const code = (error as { code?: string }).code ?? '';
  const message = errorText(error);
  if (BUSY.has(code)) {
    return new StateStoreError('locked', `state file ${path} is in use by another run (${message})`, {
      cause: error,
      path,
    });
  }
  if (CORRUPT.has(code)) {
    return new StateStoreError(
      'corrupt',
      `state file ${path} is not a usable SQLite database (${message}); it was left as it is`,
      {
        cause: error,
        path,
      },
    );
  }
  if (ACCESS.test(code)) {
    const readOnly = notWritable(path);
    if (readOnly !== null) {
      return new StateStoreError('io', `state file ${path} cannot be written: ${readOnly} (${message})`, {
        cause: error,
        path,
      });
    }
  }
  return new StateStoreError('io', `state file ${path}: ${message}`, { cause: error, path });
}

/** SQLite's codes for a file it could not open or write ("unable to open", "disk I/O error", ...). */
const ACCESS = /^SQLITE_(READONLY|CANTOPEN|IOERR|PERM|AUTH)/;

/**
 * Which of the state file and its directory (where SQLite makes its `-wal` and `-shm` files)
 * cannot be written, said the way a user fixes it; `null` when both can. SQLite's own words for
 * these ("disk I/O error", "unable to open database file") name neither the path nor the cause.
 */
function notWritable(path: string): string | null {
  for (const p of [path, dirname(resolve(path))]) {
    if (!existsSync(p)) continue;
    try {
      accessSync(p, constants.W_OK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const what = p === path ? p : `its directory ${p}`;
      return code === 'EROFS'
        ? `${what} is on a read-only file system`
        : `${what} is read-only (permission denied)`;
    }
  }
  return null;
}

/**
 * Opens (creating when missing) an SQLite file holding a batch state: locked for this connection
 * (`locking_mode = EXCLUSIVE`), WAL, the state's schema created or migrated in one transaction.
 * Throws `StateStoreError` (`locked`, `corrupt`, `io`) and leaves a file it cannot use as it is.
 */
export function openStateDatabase(path: string, options: SqliteStateStoreOptions = {}): Database.Database {
  let db: Database.Database;
  try {
    db = new Database(path, { timeout: options.busyTimeoutMs ?? 200 });
  } catch (error) {
    throw problemOf(error, path);
  }
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    const tables = db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`)
      .all()
      .map((r) => (r as { name: string }).name);
    if (tables.length > 0) {
      const app = tables.includes('meta')
        ? (db.prepare(`SELECT value FROM meta WHERE key = 'app'`).get() as { value: string } | undefined)
        : undefined;
      if (app?.value !== APP) {
        throw new StateStoreError(
          'corrupt',
          `${path} is an SQLite database, but not a usp batch state; it was left as it is`,
          {
            path,
          },
        );
      }
      const version = db.prepare(`SELECT value FROM meta WHERE key = 'schema'`).get() as
        | { value: string }
        | undefined;
      if (version === undefined || !READABLE.has(version.value)) {
        throw new StateStoreError(
          'corrupt',
          `${path} has state schema ${version?.value ?? '?'}, this version reads ${SCHEMA_VERSION}`,
          {
            path,
          },
        );
      }
    }
    db.pragma('journal_mode = WAL');
    // WAL with NORMAL: a killed process loses nothing committed; power loss may lose the last commits.
    db.pragma('synchronous = NORMAL');
    // better-sqlite3 builds SQLite with a 16 MiB page cache. A batch reads and writes each site's
    // rows once per run, so the cache only ever helps with the index pages; at 16 MiB it grew the
    // process by 15-20 MB over 1,000 sites for nothing. SQLite's own default:
    db.pragma('cache_size = -2000');
    // A write at once takes the exclusive lock that the connection then keeps.
    db.transaction(() => {
      db.exec(SCHEMA);
      db.prepare(`INSERT OR IGNORE INTO meta (key, value) VALUES ('app', ?), ('schema', ?)`).run(
        APP,
        SCHEMA_VERSION,
      );
      const version = db.prepare(`SELECT value FROM meta WHERE key = 'schema'`).get() as { value: string };
      if (version.value === '1') db.exec(MIGRATE_1_TO_2);
      if (version.value === '1' || version.value === '2') db.exec(MIGRATE_2_TO_3);
    }).immediate();
  } catch (error) {
    db.close();
    if (error instanceof StateStoreError) throw error;
    throw problemOf(error, path);
  }

  return db;
}

/**
 * The batch state in one SQLite file (better-sqlite3, WAL). The connection holds the file's lock
 * for as long as it is open (`locking_mode = EXCLUSIVE`), so a second run on the same file fails
 * at once with a `locked` `StateStoreError`; a file that is not this store's state fails as
 * `corrupt` and is never changed. Each `saveSite` is one transaction (the site's rows and the run
 * mark together). Calls are synchronous underneath; a state of 500,000 sitemaps is about 120 MB.
 */
export function sqliteStateStore(path: string, options: SqliteStateStoreOptions = {}): StateStore {
  const db = openStateDatabase(path, options);
  return stateStoreOn(db, path, () => db.close());
}

/**
 * The state store on an open state database (`openStateDatabase`). A `saveSite` called while the
 * connection is in a transaction (the results store's commit) becomes a savepoint of it, so the
 * state commits with the rows. `onClose` runs once, on `close()`.
 */
export function stateStoreOn(db: Database.Database, path: string, onClose: () => void): StateStore {
  const getSite = db.prepare(
    `SELECT walked_at, full_walk_at, probed_at, lastmod_trust, unreachable FROM sites WHERE site = ?`,
  );
  // The digests stay behind (\`loadPages\`): a run where nothing changed needs none of them, and
  // at 1,000 sites they are half a million rows.
  const getSitemaps = db.prepare(`SELECT url, data FROM sitemaps WHERE site = ?`);
  const getPages = db.prepare(`SELECT pages FROM page_digests WHERE site = ? AND url = ?`).pluck();
  const getUnreachable = db.prepare(`SELECT site FROM sites WHERE unreachable IS NOT NULL`).pluck();
  /*
   * Upserts, not INSERT OR REPLACE: REPLACE deletes the old row and inserts a new one (a new
   * rowid, so the primary key's index changes too), and a no-change run's save, the site's row
   * and the run mark, wrote 5 pages to the WAL; updated in place they are 2 (the two rows' leaf
   * pages), so a run of 1,000 sites checkpoints (and fsyncs, on the batch's thread) 2 times
   * instead of 5. Measured alone, the 1,000 saves: 76-141 ms to 41-63 ms.
   */
  const putSite = db.prepare(
    `INSERT INTO sites (site, walked_at, full_walk_at, probed_at, lastmod_trust, unreachable)
     VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (site) DO UPDATE SET walked_at = excluded.walked_at, full_walk_at = excluded.full_walk_at,
       probed_at = excluded.probed_at, lastmod_trust = excluded.lastmod_trust, unreachable = excluded.unreachable`,
  );
  const putSitemap = db.prepare(
    `INSERT INTO sitemaps (site, url, data) VALUES (?, ?, ?)
     ON CONFLICT (site, url) DO UPDATE SET data = excluded.data`,
  );
  const putPages = db.prepare(
    `INSERT INTO page_digests (site, url, pages) VALUES (?, ?, ?)
     ON CONFLICT (site, url) DO UPDATE SET pages = excluded.pages`,
  );
  const dropPages = db.prepare(`DELETE FROM page_digests WHERE site = ? AND url = ?`);
  // Documents no longer in the site's state: \`?2\` is the JSON array of the URLs kept.
  const dropStaleSitemaps = db.prepare(
    `DELETE FROM sitemaps WHERE site = ? AND url NOT IN (SELECT value FROM json_each(?))`,
  );
  const dropStalePages = db.prepare(
    `DELETE FROM page_digests WHERE site = ? AND url NOT IN (SELECT value FROM json_each(?))`,
  );
  const putMark = db.prepare(
    `INSERT INTO run_marks (run_id, site, offsets) VALUES (?, ?, ?)
     ON CONFLICT (run_id) DO UPDATE SET site = excluded.site, offsets = excluded.offsets`,
  );
  const getMark = db.prepare(`SELECT site, offsets FROM run_marks WHERE run_id = ?`);
  /*
   * The sitemap rows \`loadSite\` read (URL → stored text), kept until that site is saved: a row
   * that comes back with the same text is not written again, and when the site lists the same
   * URLs no stale row is looked for. On a run where nothing changed (304s and skips) a save then
   * writes the site's own row and the mark only.
   */
  const loadedRows = new Map<string, Map<string, string>>();
  const save = db.transaction((state: SiteState, mark: RunMark | undefined) => {
    const loaded = loadedRows.get(state.site);
    loadedRows.delete(state.site);
    putSite.run(
      state.site,
      state.walkedAt,
      state.fullWalkAt,
      state.probedAt,
      state.lastmodTrust,
      state.unreachable === null ? null : JSON.stringify(state.unreachable),
    );
    const sameUrls =
      loaded !== undefined &&
      loaded.size === state.sitemaps.length &&
      state.sitemaps.every((s) => loaded.has(s.url));
    if (!sameUrls) {
      const urls = JSON.stringify(state.sitemaps.map((s) => s.url));
      dropStaleSitemaps.run(state.site, urls);
      dropStalePages.run(state.site, urls);
    }
    for (const s of state.sitemaps) {
      const pages = s.pages;
      // The stored text leaves the digest out. A 304 or a skip carries none, and JSON.stringify
      // leaves out an undefined property anyway: the same text without a copy of the object.
      const text = JSON.stringify(pages === undefined ? s : withoutPages(s));
      if (loaded?.get(s.url) !== text) putSitemap.run(state.site, s.url, text);
      // Left out: the stored digest stands (a 304 or a skip), and its row is not rewritten.
      if (pages === null) dropPages.run(state.site, s.url);
      else if (pages !== undefined) {
        putPages.run(state.site, s.url, Buffer.from(pages.buffer, pages.byteOffset, pages.byteLength));
      }
    }
    if (mark !== undefined) putMark.run(mark.runId, mark.site, JSON.stringify(mark.offsets));
  });
  let closed = false;
  const guard = <T>(fn: () => T): Promise<T> => {
    if (closed) return Promise.reject(new StateStoreError('io', `state file ${path} was closed`, { path }));
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(problemOf(error, path));
    }
  };

  return {
    loadSite: (site) =>
      guard(() => {
        const row = getSite.get(site) as
          | {
              walked_at: number;
              full_walk_at: number;
              probed_at: number;
              lastmod_trust: number;
              unreachable: string | null;
            }
          | undefined;
        if (row === undefined) return null;
        const rows = getSitemaps.all(site) as { url: string; data: string }[];
        loadedRows.set(site, new Map(rows.map((r) => [r.url, r.data])));
        const sitemaps = rows.map((r) => JSON.parse(r.data) as SitemapData);
        return {
          site,
          walkedAt: row.walked_at,
          fullWalkAt: row.full_walk_at,
          probedAt: row.probed_at,
          lastmodTrust: row.lastmod_trust,
          unreachable: row.unreachable === null ? null : (JSON.parse(row.unreachable) as UnreachableMark),
          sitemaps,
        };
      }),
    loadPages: (site, url) =>
      guard(() => {
        const pages = getPages.get(site, url) as Buffer | undefined;
        return pages === undefined ? null : new Uint8Array(pages);
      }),
    unreachableSites: () => guard(() => new Set(getUnreachable.all() as string[])),
    saveSite: (state, mark) => guard(() => save.immediate(state, mark)),
    lastMark: (runId) =>
      guard(() => {
        const row = getMark.get(runId) as { site: string; offsets: string } | undefined;
        return row === undefined ? null : { runId, site: row.site, offsets: JSON.parse(row.offsets) };
      }),
    async close() {
      if (closed) return;
      closed = true;
      onClose();
    },
  };
}
