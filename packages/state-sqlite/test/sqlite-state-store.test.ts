import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateStoreError } from '@usp-ts/batch';
import { stateStoreSuite } from '@usp-ts/driver-testkit';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteStateStore } from '../src/sqlite-state-store.js';

const dir = mkdtempSync(join(tmpdir(), 'usp-state-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
let last = '';

stateStoreSuite('sqliteStateStore', {
  open: async () => {
    last = join(dir, `s${n++}.sqlite`);
    return sqliteStateStore(last);
  },
  reopen: async () => sqliteStateStore(last),
});

describe('sqliteStateStore on files it must not use', () => {
  it('refuses a file another connection holds, and leaves it working', async () => {
    const path = join(dir, 'held.sqlite');
    const first = sqliteStateStore(path);
    await first.saveSite({
      site: 'https://a.example/',
      walkedAt: 1,
      fullWalkAt: 1,
      probedAt: 1,
      lastmodTrust: 0,
      unreachable: null,
      sitemaps: [],
    });
    const attempt = (() => {
      try {
        sqliteStateStore(path, { busyTimeoutMs: 10 });
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(attempt).toBeInstanceOf(StateStoreError);
    expect((attempt as StateStoreError).problem).toBe('locked');
    expect((await first.loadSite('https://a.example/'))?.walkedAt).toBe(1);
    await first.close();
  });

  it('refuses a file that is not SQLite, and leaves its bytes as they were', () => {
    const path = join(dir, 'garbage.sqlite');
    const bytes = 'this is not a database, but somebody cares about it\n'.repeat(200);
    writeFileSync(path, bytes);
    expect(() => sqliteStateStore(path)).toThrow(
      expect.objectContaining({ code: 'USP_STATE', problem: 'corrupt' }),
    );
    expect(readFileSync(path, 'utf8')).toBe(bytes);
  });

  it('refuses an SQLite database of something else, and adds nothing to it', () => {
    const path = join(dir, 'other.sqlite');
    const other = new Database(path);
    other.exec('CREATE TABLE orders (id INTEGER)');
    other.close();
    expect(() => sqliteStateStore(path)).toThrow(/not a usp batch state/);
    const again = new Database(path);
    const tables = again.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all();
    again.close();
    expect(tables).toEqual([{ name: 'orders' }]);
  });
});

describe('sqliteStateStore on a run where nothing changed', () => {
  const site = 'https://n.example/';
  const digest = (seed: number) => Uint8Array.from({ length: 16 * 500 }, (_, i) => (i * seed) % 256);
  const state = (fetchedAt: number) => ({
    site,
    walkedAt: fetchedAt,
    fullWalkAt: 1,
    probedAt: 1,
    lastmodTrust: 0,
    unreachable: null,
    sitemaps: [1, 2, 3].map((k) => ({
      url: `${site}s${k}.xml`,
      finalUrl: `${site}s${k}.xml`,
      type: 'PagesXMLSitemap' as const,
      etag: '"v1"',
      lastModified: null,
      indexLastmod: null,
      bodySha256: 'cd'.repeat(32),
      children: [],
      pageCount: 500,
      pages: digest(k + 3),
      news: false,
      crawlDelayMs: null,
      fetchedAt,
    })),
  });
  const digestRows = (path: string) => {
    const db = new Database(path, { readonly: true });
    const rows = db.prepare(`SELECT rowid, url FROM page_digests ORDER BY url`).all();
    db.close();
    return rows;
  };
  /** Logs every row written to (`url`) or deleted from (`-url`) `table` from now on. */
  const logWrites = (path: string, table: string, key: string) => {
    const db = new Database(path);
    db.exec(`CREATE TABLE written (url TEXT);
      CREATE TRIGGER log_in AFTER INSERT ON ${table} BEGIN INSERT INTO written VALUES (new.${key}); END;
      CREATE TRIGGER log_up AFTER UPDATE ON ${table} BEGIN INSERT INTO written VALUES (new.${key}); END;
      CREATE TRIGGER log_out AFTER DELETE ON ${table} BEGIN INSERT INTO written VALUES ('-' || old.${key}); END;`);
    db.close();
    return () => {
      const d = new Database(path, { readonly: true });
      const rows = d.prepare(`SELECT url FROM written`).pluck().all();
      d.close();
      return rows;
    };
  };

  it('reads and rewrites no page digest when they are left out (a 304 moves only the small row)', async () => {
    const path = join(dir, 'nochange.sqlite');
    const store = sqliteStateStore(path);
    await store.saveSite(state(1));
    await store.close();
    const written = logWrites(path, 'page_digests', 'url');

    const again = sqliteStateStore(path);
    const loaded = (await again.loadSite(site))!;
    await again.saveSite({
      ...loaded,
      walkedAt: 2,
      sitemaps: loaded.sitemaps.map((m) => ({ ...m, fetchedAt: 2 })),
    });
    await again.close();
    expect(written()).toEqual([]);

    const third = sqliteStateStore(path);
    const back = (await third.loadSite(site))!;
    expect(back.sitemaps.map((m) => m.fetchedAt)).toEqual([2, 2, 2]);
    expect(back.sitemaps.map((m) => m.pages)).toEqual([undefined, undefined, undefined]);
    const digests = await Promise.all(back.sitemaps.map((m) => third.loadPages(site, m.url)));
    expect(digests.map((d) => [...(d ?? [])])).toEqual(state(1).sitemaps.map((m) => [...m.pages]));
    // A digest given is written, even with the same bytes.
    await third.saveSite({ ...back, sitemaps: back.sitemaps.map((m, i) => ({ ...m, pages: digests[i] })) });
    await third.close();
    expect(written()).toEqual(state(1).sitemaps.map((m) => m.url));
  });

  it('writes no sitemap row that comes back as it was loaded, and only the rows that moved', async () => {
    const path = join(dir, 'same-rows.sqlite');
    const store = sqliteStateStore(path);
    await store.saveSite(state(1));
    await store.close();
    const written = logWrites(path, 'sitemaps', 'url');

    const again = sqliteStateStore(path);
    const loaded = (await again.loadSite(site))!;
    await again.saveSite({ ...loaded, walkedAt: 2 });
    const moved = (await again.loadSite(site))!;
    await again.saveSite({
      ...moved,
      // A state's `pages: undefined` (a 304 names no digest) is the text it was loaded as.
      sitemaps: moved.sitemaps.map((m) =>
        m.url.endsWith('s2.xml') ? { ...m, etag: '"v2"' } : { ...m, pages: undefined },
      ),
    });
    // Saved without loading first: the stale rows are dropped and every row is written.
    await again.saveSite({ ...moved, sitemaps: moved.sitemaps.slice(0, 1) });
    await again.close();
    expect(written()).toEqual([`${site}s2.xml`, `-${site}s2.xml`, `-${site}s3.xml`, `${site}s1.xml`]);
    const third = sqliteStateStore(path);
    expect((await third.loadSite(site))?.walkedAt).toBe(2);
    await third.close();
  });

  it('updates the rows a save moves in place: the site row and the run mark keep their rowids', async () => {
    // INSERT OR REPLACE deletes the row and inserts it again under a new rowid, which writes the
    // primary key's index as well as the table: a no-change run's save put 5 pages in the WAL
    // instead of 2.
    const path = join(dir, 'in-place.sqlite');
    const store = sqliteStateStore(path);
    await store.saveSite(state(1), { runId: 'r', site, offsets: { pages: 1 } });
    await store.saveSite({ ...state(1), site: 'https://o.example/' }, { runId: 'r0', site, offsets: {} });
    const rowids = () => {
      const d = new Database(path, { readonly: true });
      const rows = [
        d.prepare(`SELECT rowid, site FROM sites ORDER BY site`).all(),
        d.prepare(`SELECT rowid, run_id FROM run_marks ORDER BY run_id`).all(),
      ];
      d.close();
      return rows;
    };
    await store.close();
    const before = rowids();

    const again = sqliteStateStore(path);
    const loaded = (await again.loadSite(site))!;
    await again.saveSite({ ...loaded, walkedAt: 2 }, { runId: 'r', site, offsets: { pages: 2 } });
    expect((await again.lastMark('r'))?.offsets).toEqual({ pages: 2 });
    expect((await again.loadSite(site))?.walkedAt).toBe(2);
    await again.close();
    expect(rowids()).toEqual(before);
  });

  it('reads a schema 1 file (digests inside the sitemap rows) and moves them out', async () => {
    const path = join(dir, 'schema1.sqlite');
    const old = new Database(path);
    old.exec(`
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE sites (site TEXT PRIMARY KEY, walked_at INTEGER NOT NULL, full_walk_at INTEGER NOT NULL,
        probed_at INTEGER NOT NULL, lastmod_trust INTEGER NOT NULL);
      CREATE TABLE sitemaps (site TEXT NOT NULL, url TEXT NOT NULL, data TEXT NOT NULL, pages BLOB,
        PRIMARY KEY (site, url)) WITHOUT ROWID;
      CREATE TABLE run_marks (run_id TEXT PRIMARY KEY, site TEXT NOT NULL, offsets TEXT NOT NULL);
      INSERT INTO meta VALUES ('app', 'usp-batch-state'), ('schema', '1');
    `);
    const s = state(1);
    old.prepare(`INSERT INTO sites VALUES (?, 1, 1, 1, 0)`).run(site);
    for (const m of s.sitemaps) {
      const { pages, ...data } = m;
      old
        .prepare(`INSERT INTO sitemaps VALUES (?, ?, ?, ?)`)
        .run(site, m.url, JSON.stringify(data), Buffer.from(pages));
    }
    old.close();

    const store = sqliteStateStore(path);
    const loaded = (await store.loadSite(site))!;
    const digests = await Promise.all(loaded.sitemaps.map((m) => store.loadPages(site, m.url)));
    await store.close();
    expect(loaded.sitemaps.map((m, i) => [m.url, [...(digests[i] ?? [])]])).toEqual(
      s.sitemaps.map((m) => [m.url, [...m.pages]]),
    );
    expect(loaded.unreachable).toBeNull();
    expect(digestRows(path)).toHaveLength(3);
    const db = new Database(path, { readonly: true });
    expect(db.prepare(`SELECT value FROM meta WHERE key = 'schema'`).get()).toEqual({ value: '3' });
    expect(db.prepare(`SELECT count(*) AS n FROM sitemaps WHERE pages IS NOT NULL`).get()).toEqual({ n: 0 });
    db.close();
  });
});

describe('sqliteStateStore schema 3 (sites that gave no answer)', () => {
  const site = 'https://u.example/';
  const schema2 = (path: string) => {
    const old = new Database(path);
    old.exec(`
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE sites (site TEXT PRIMARY KEY, walked_at INTEGER NOT NULL, full_walk_at INTEGER NOT NULL,
        probed_at INTEGER NOT NULL, lastmod_trust INTEGER NOT NULL);
      CREATE TABLE sitemaps (site TEXT NOT NULL, url TEXT NOT NULL, data TEXT NOT NULL, pages BLOB,
        PRIMARY KEY (site, url)) WITHOUT ROWID;
      CREATE TABLE page_digests (site TEXT NOT NULL, url TEXT NOT NULL, pages BLOB NOT NULL, PRIMARY KEY (site, url));
      CREATE TABLE run_marks (run_id TEXT PRIMARY KEY, site TEXT NOT NULL, offsets TEXT NOT NULL);
      INSERT INTO meta VALUES ('app', 'usp-batch-state'), ('schema', '2');
    `);
    old.prepare(`INSERT INTO sites VALUES (?, 5, 4, 3, 2)`).run(site);
    old.close();
  };

  it('migrates a schema 2 file in place, keeping its sites', async () => {
    const path = join(dir, 'schema2.sqlite');
    schema2(path);
    const store = sqliteStateStore(path);
    expect(await store.loadSite(site)).toEqual({
      site,
      walkedAt: 5,
      fullWalkAt: 4,
      probedAt: 3,
      lastmodTrust: 2,
      unreachable: null,
      sitemaps: [],
    });
    const mark = { at: 9, since: 8, reason: 'x: timeout' };
    await store.saveSite({
      site,
      walkedAt: 5,
      fullWalkAt: 4,
      probedAt: 3,
      lastmodTrust: 2,
      unreachable: mark,
      sitemaps: [],
    });
    await store.close();
    const again = sqliteStateStore(path);
    expect((await again.loadSite(site))?.unreachable).toEqual(mark);
    await again.close();
    const db = new Database(path, { readonly: true });
    expect(db.prepare(`SELECT value FROM meta WHERE key = 'schema'`).get()).toEqual({ value: '3' });
    db.close();
  });

  it('refuses a newer schema, says which, and leaves the file as it was', () => {
    const path = join(dir, 'schema9.sqlite');
    schema2(path);
    const db = new Database(path);
    db.exec(`UPDATE meta SET value = '9' WHERE key = 'schema'`);
    db.close();
    const bytes = readFileSync(path);
    expect(() => sqliteStateStore(path)).toThrow(/has state schema 9, this version reads 3/);
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });
});
