import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ListedPageRow,
  PAGE_COLUMNS,
  type PageRow,
  pageRowOf,
  pageRowsQuery,
  pageValues,
  runSummaryQueries,
  type SitemapRow,
  type SiteResult,
  type SiteSink,
  type SiteState,
  StateStoreError,
  sitemapRowOf,
} from '@usp-ts/batch';
import { siteSinkSuite, stateStoreSuite } from '@usp-ts/driver-testkit';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { readSqlitePageRows } from '../src/read-rows.js';
import { prepareResults, sqliteResultSink } from '../src/sqlite-results.js';
import { openStateDatabase } from '../src/sqlite-state-store.js';
import { openSqliteStore } from '../src/sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'usp-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `r${n++}.sqlite`);

const page = (site: string, url: string, change: 'new' | 'changed' = 'new'): ListedPageRow => ({
  site,
  sitemap: `${site}a.xml`,
  url,
  priority: 0.5,
  lastModified: '2026-11-20',
  changeFrequency: null,
  newsStory: null,
  images: [{ loc: `${url}.png`, caption: null, geoLocation: null, title: null, license: null }],
  alternates: null,
  extensions: { video: { title: 'x' } } as never,
  change,
});
const sitemap = (site: string): SitemapRow => ({
  site,
  url: `${site}a.xml`,
  parent: null,
  type: 'PagesXMLSitemap',
  status: 200,
  notModified: false,
  skipped: false,
  etag: '"e"',
  lastModified: null,
  bytes: 100,
  pages: 2,
  ms: 3,
  change: 'new',
});
const result = (site: string, pages = 2): SiteResult => ({
  site,
  status: 'ok',
  reason: null,
  pages,
  sitemaps: 1,
  requests: 2,
  notModified: 0,
  skipped: 0,
  bytes: 100,
  ms: 5,
});
const stateOf = (site: string, walkedAt: number): SiteState => ({
  site,
  walkedAt,
  fullWalkAt: walkedAt,
  probedAt: walkedAt,
  lastmodTrust: 0,
  unreachable: null,
  sitemaps: [],
});
const count = (path: string, sql: string): number => {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(sql).pluck().get() as number;
  } finally {
    db.close();
  }
};

// The published contracts. The sink is opened as `openSqliteStore` opens it, keeping the
// connection: the file is locked by its writer, so the suite reads through the same connection.
let suiteFile = '';
let suiteDb: Database.Database | null = null;
function suiteSink(resume: boolean): SiteSink {
  const db = openStateDatabase(suiteFile);
  // The suite closes its sink as a stopped process leaves it; a kill leaves the run without an end.
  if (resume) db.prepare('UPDATE runs SET ended_at = NULL').run();
  prepareResults(db, suiteFile);
  const sink = sqliteResultSink(db, suiteFile, { resume });
  suiteDb = db;
  return Object.assign(Object.create(sink) as SiteSink, {
    async close() {
      await sink.close();
      if (suiteDb === db) suiteDb = null;
      db.close();
    },
  });
}
siteSinkSuite('sqliteResultSink (openSqliteStore)', {
  open: async () => {
    suiteFile = fresh();
    return suiteSink(false);
  },
  resume: async () => suiteSink(true),
  async read() {
    const db = suiteDb ?? new Database(suiteFile, { readonly: true });
    try {
      const latest = '(SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1)';
      const { sql, params } = pageRowsQuery({}, () => '?');
      const pages = db
        .prepare(sql)
        .all(...params)
        .map((r) => pageRowOf(r as Parameters<typeof pageRowOf>[0]));
      const sitemaps = db
        .prepare(`SELECT * FROM sitemap_rows WHERE run_id = ${latest}`)
        .all()
        .map((r) => sitemapRowOf(r as Parameters<typeof sitemapRowOf>[0]));
      const sites = db
        .prepare(runSummaryQueries(() => '?').sites)
        .all(db.prepare(latest.slice(1, -1)).pluck().get()) as SiteResult[];
      return { pages, sitemaps, sites };
    } finally {
      if (db !== suiteDb) db.close();
    }
  },
});
stateStoreSuite('openSqliteStore(...).state', {
  open: async () => {
    suiteFile = fresh();
    const store = openSqliteStore(suiteFile);
    return Object.assign(Object.create(store.state), { close: () => store.close() });
  },
  reopen: async () => {
    const store = openSqliteStore(suiteFile);
    return Object.assign(Object.create(store.state), { close: () => store.close() });
  },
});

describe('openSqliteStore', () => {
  it("commits a site's rows and its state in one transaction, and reads the rows back as written", async () => {
    const path = fresh();
    const store = openSqliteStore(path);
    const site = 'https://a.example/';
    const out = store.sink.begin(site);
    const rows = [page(site, `${site}p1`), page(site, `${site}p2`, 'changed')];
    for (const r of rows) out.page(r);
    out.sitemap(sitemap(site));
    await out.commit(result(site), { saveState: (mark) => store.state.saveSite(stateOf(site, 7), mark) });
    expect((await store.state.loadSite(site))?.walkedAt).toBe(7);
    expect(store.sink.done.has(site)).toBe(true);
    await store.close();
    expect(count(path, 'SELECT count(*) FROM page_rows')).toBe(2);
    expect(count(path, 'SELECT count(*) FROM sitemap_rows')).toBe(1);
    expect(count(path, `SELECT count(*) FROM runs WHERE ended_at IS NOT NULL`)).toBe(1);
    expect(count(path, `SELECT json_extract(extensions, '$.video.title') = 'x' FROM page_rows LIMIT 1`)).toBe(
      1,
    );
  });

  it("writes each page column from the JSON text exactly as binding the row's values did, over several inserts", async () => {
    const path = fresh();
    const store = openSqliteStore(path);
    const site = 'https://j.example/';
    const awkward = [
      'lone\ud800surrogate',
      'low\udc00first',
      'nul\u0000ctl\u0001\t\n',
      'q"uote\\back',
      'sep\u2028\u2029',
      'astral\u{1f600}\u00e9',
    ];
    const rows: PageRow[] = [];
    for (let i = 0; i < 3_000; i++) {
      const base = page(site, `${site}${awkward[i % awkward.length]}/${i}/${'x'.repeat(i % 200)}`);
      const priority = [0.1, 1, 0, -0, 1e21, Number.NaN, (i * 0.6180339887498949) % 1, 1 / 3][
        i % 8
      ] as number;
      const row =
        i % 5 === 0
          ? { site, sitemap: base.sitemap, url: base.url, change: 'removed' as const }
          : {
              ...base,
              priority,
              lastModified: i % 3 === 0 ? null : base.lastModified,
              changeFrequency: i % 4 === 0 ? 'daily' : null,
              newsStory:
                i % 7 === 0
                  ? {
                      title: `t${awkward[i % awkward.length]}`,
                      publishDate: null,
                      publicationName: 'P',
                      publicationLanguage: 'en',
                      access: null,
                      genres: [],
                      keywords: ['k"1', 'k2'],
                      stockTickers: [],
                    }
                  : null,
              images: i % 4 === 1 ? null : base.images,
              alternates: i % 2 === 0 ? [{ hreflang: 'fr', href: `${base.url}?fr` }] : null,
              extensions: (i % 6 === 0 || i % 4 === 1
                ? undefined
                : { video: { n: priority, s: 'a\u2028b' } }) as never,
              change: i % 2 === 0 ? ('new' as const) : ('unchanged' as const),
            };
      rows.push(row as PageRow);
    }
    // Keys in another order: extension data first, the line still ending as a plain row's does.
    for (let i = 0; i < 3; i++) {
      const { extensions: _, ...rest } = page(site, `${site}odd/${i}`);
      rows.push({ extensions: { video: { i } }, ...rest, alternates: null, images: null } as PageRow);
    }
    // Plain rows (no news, images, alternates or extension data) among the others.
    expect(
      rows.filter((r) => 'images' in r && r.images === null && r.extensions === undefined).length,
    ).toBeGreaterThan(300);
    const out = store.sink.begin(site);
    rows.forEach((r, i) => {
      // The three ways a row reaches the sink: text alone, object with its text, object alone.
      if (i % 3 === 0) out.pageLine?.(JSON.stringify(r));
      else if (i % 3 === 1) out.page(r, JSON.stringify(r));
      else out.page(r);
    });
    out.sitemap(sitemap(site));
    await out.commit(result(site, rows.length));
    await store.close();
    // The reference: the same rows' values bound one by one, as the sink wrote them before.
    const db = new Database(path);
    try {
      const cols = PAGE_COLUMNS.join(', ');
      db.exec(`CREATE TEMP TABLE expected AS SELECT ${cols} FROM page_rows WHERE 0`);
      const bind = db.prepare(`INSERT INTO expected VALUES (${PAGE_COLUMNS.map(() => '?').join(', ')})`);
      for (const r of rows) bind.run(...pageValues(r));
      const exact = PAGE_COLUMNS.map((c) => `typeof(${c}), hex(${c}), ${c}`).join(', ');
      const got = db
        .prepare(
          `SELECT ${exact} FROM (SELECT s.site, p.*, p.rowid AS n FROM page_data p JOIN site_runs s ON s.id = p.site_run) ORDER BY n`,
        )
        .raw()
        .all();
      const want = db.prepare(`SELECT ${exact} FROM temp.expected ORDER BY rowid`).raw().all();
      expect(got).toHaveLength(rows.length);
      expect(got).toEqual(want);
    } finally {
      db.close();
    }
  });

  it('a state that cannot be saved keeps none of the rows, and the site is not done', async () => {
    const path = fresh();
    const store = openSqliteStore(path);
    const site = 'https://b.example/';
    const out = store.sink.begin(site);
    out.page(page(site, `${site}p1`));
    const error = await out
      .commit(result(site), { saveState: () => Promise.reject(new Error('state down')) })
      .catch((e) => e);
    expect((error as Error).message).toBe('state down');
    expect(store.sink.done.has(site)).toBe(false);
    await store.close();
    expect(count(path, 'SELECT count(*) FROM page_rows')).toBe(0);
    expect(count(path, 'SELECT count(*) FROM site_rows')).toBe(0);
  });

  it('resumes the unfinished run: committed sites are done, the rows of a site in flight were never kept', async () => {
    const path = fresh();
    const first = openSqliteStore(path);
    const a = 'https://a.example/';
    const out = first.sink.begin(a);
    out.page(page(a, `${a}p1`));
    await out.commit(result(a, 1), { saveState: (mark) => first.state.saveSite(stateOf(a, 1), mark) });
    const inFlight = first.sink.begin('https://b.example/');
    inFlight.page(page('https://b.example/', 'https://b.example/p1'));
    // Stopped here (Ctrl-C, a full disk): closed without an end, as the CLI does then.
    await first.close({ ended: false });
    const resumed = openSqliteStore(path, { resume: true });
    expect(resumed.runId).toBe(first.runId);
    expect([...resumed.sink.done]).toEqual([a]);
    await resumed.close();
    expect(count(path, `SELECT count(*) FROM page_rows WHERE site = 'https://b.example/'`)).toBe(0);
    const again = openSqliteStore(path);
    expect(again.runId).not.toBe(first.runId);
    await again.close();
    expect(() => openSqliteStore(path, { resume: true })).toThrow(/no unfinished run/);
  });

  it('a later copy of a site in the same run replaces the earlier one; a void copy is refused', async () => {
    const path = fresh();
    const store = openSqliteStore(path);
    const site = 'https://c.example/';
    const one = store.sink.begin(site);
    one.page(page(site, `${site}p1`));
    one.page(page(site, `${site}p2`));
    await one.commit(result(site), { fence: async () => ({ token: 't1', voids: [] }) });
    const two = store.sink.begin(site);
    two.page(page(site, `${site}p1`));
    await two.commit(result(site, 1), { fence: async () => ({ token: 't2', voids: ['t1'] }) });
    const stale = store.sink.begin(site);
    stale.page(page(site, `${site}stale`));
    const error = await stale
      .commit(result(site, 1), { fence: async () => ({ token: 't1', voids: [] }) })
      .catch((e) => e);
    expect(error).toMatchObject({ code: 'USP_OUTPUT' });
    expect((error as Error).message).toMatch(/replaced by a later try/);
    await store.close();
    expect(count(path, 'SELECT count(*) FROM page_rows')).toBe(1);
    expect(count(path, `SELECT count(*) FROM site_rows WHERE copy = 't2'`)).toBe(1);
  });

  it('a second writer gets one clear error, and an older tool refuses a newer results schema', async () => {
    const path = fresh();
    const store = openSqliteStore(path);
    let error: unknown = null;
    try {
      openSqliteStore(path, { busyTimeoutMs: 10 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StateStoreError);
    expect((error as StateStoreError).problem).toBe('locked');
    expect((error as Error).message).not.toContain('\n');
    await store.close();
    const raw = new Database(path);
    raw.prepare(`UPDATE meta SET value = '99' WHERE key = 'results_schema'`).run();
    raw.close();
    expect(() => openSqliteStore(path)).toThrow(/results schema 99; this usp reads up to 3: upgrade usp/);
    expect(count(path, 'SELECT count(*) FROM runs')).toBe(1);
  });
});

describe('readSqlitePageRows', () => {
  it("streams a run's rows, filtered by change and site, as they were written", async () => {
    const path = fresh();
    const store = openSqliteStore(path);
    for (const site of ['https://a.example/', 'https://b.example/']) {
      const out = store.sink.begin(site);
      out.page(page(site, `${site}p1`));
      out.page(page(site, `${site}p2`, 'changed'));
      out.page({ site, sitemap: `${site}a.xml`, url: `${site}gone`, change: 'removed' });
      await out.commit(result(site, 3));
    }
    await store.close();
    const all = [...readSqlitePageRows(path)];
    expect(all.length).toBe(6);
    expect(all[0]).toEqual(page('https://a.example/', 'https://a.example/p1'));
    const picked = [
      ...readSqlitePageRows(path, {
        run: store.runId,
        changes: ['changed', 'removed'],
        site: 'https://b.example/',
      }),
    ];
    expect(picked.map((r) => [r.url, r.change])).toEqual([
      ['https://b.example/p2', 'changed'],
      ['https://b.example/gone', 'removed'],
    ]);
    expect([...readSqlitePageRows(path, { run: 'nope' })]).toEqual([]);
  });
});
