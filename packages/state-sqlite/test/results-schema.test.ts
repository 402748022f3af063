import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PAGE_COLUMNS, type PageRow } from '@usp-ts/batch';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { readSqlitePageRows } from '../src/read-rows.js';
import { readSqliteRunSummary } from '../src/read-run-summary.js';
import { RESULTS_SCHEMA } from '../src/results-schema.js';
import { openSqliteStore } from '../src/sqlite-store.js';
import { siteResult } from './site-result.js';

const dir = mkdtempSync(join(tmpdir(), 'usp-results-schema-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Written by results schema 1's store (eaffb4a, `fixtures/make-results-schema-1.mjs`): two runs,
 * the second unfinished, a replaced copy, a row of another site than its commit's, a lone
 * surrogate, extension data, the state of two sites.
 */
const SCHEMA_1 = fileURLToPath(new URL('./fixtures/results-schema-1.sqlite', import.meta.url));

/**
 * Written by results schema 2's store (b7f7946, `fixtures/make-results-schema-2.mjs`): as
 * `SCHEMA_1`, and two held unchanged rows handed over in bulk, stored as a row a page.
 */
const SCHEMA_2 = fileURLToPath(new URL('./fixtures/results-schema-2.sqlite', import.meta.url));

/** Every page column with its type and bytes, and the run, in the order the rows were written. */
const EXACT = ['run_id', ...PAGE_COLUMNS].map((c) => `typeof(${c}), hex(${c}), ${c}`).join(', ');

function query<T>(path: string, sql: string): T[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(sql).raw().all() as T[];
  } finally {
    db.close();
  }
}

describe('results schemas 2 and 3', () => {
  it('migrates a schema 1 file in place: every row as written, in order, the run resumable', async () => {
    const path = join(dir, 'old.sqlite');
    copyFileSync(SCHEMA_1, path);
    const before = query(path, `SELECT ${EXACT} FROM page_rows ORDER BY rowid`);
    const sites = query(path, 'SELECT * FROM site_rows ORDER BY rowid');
    const sitemaps = query(path, 'SELECT * FROM sitemap_rows ORDER BY rowid');
    const state = query(path, 'SELECT * FROM sites ORDER BY site');
    expect(before).toHaveLength(9);

    const store = openSqliteStore(path, { resume: true });
    // The second run did not end: it goes on, its committed site done.
    expect([...store.sink.done]).toEqual(['https://a.example/']);
    expect(await store.state.loadSite('https://a.example/')).toMatchObject({ walkedAt: 1 });
    const c = 'https://c.example/';
    const out = store.sink.begin(c);
    const row = { site: c, sitemap: `${c}s.xml`, url: `${c}p`, change: 'removed' } as const;
    out.pageLine?.(JSON.stringify(row));
    // A row of another site in c's commit keeps its site.
    out.page({ ...row, site: 'https://d.example/', url: 'https://d.example/p' });
    await out.commit({ ...siteResult(c), pages: 2 });
    await store.close();

    expect(query(path, `SELECT value FROM meta WHERE key = 'results_schema'`)).toEqual([
      [String(RESULTS_SCHEMA)],
    ]);
    expect(query(path, `SELECT type FROM sqlite_master WHERE name = 'page_rows'`)).toEqual([['view']]);
    const after = query(
      path,
      `SELECT ${EXACT} FROM (SELECT s.run_id, s.site, p.*, p.rowid AS n
       FROM page_data p JOIN site_runs s ON s.id = p.site_run) ORDER BY n`,
    );
    expect(after.slice(0, before.length)).toEqual(before);
    expect(query(path, 'SELECT * FROM site_rows ORDER BY rowid').slice(0, sites.length)).toEqual(sites);
    expect(query(path, 'SELECT * FROM sitemap_rows ORDER BY rowid')).toEqual(sitemaps);
    expect(query(path, 'SELECT * FROM sites ORDER BY site')).toEqual(state);

    // The readers and plain SQL on `page_rows` see the run as one table.
    const run = store.runId;
    const rows: PageRow[] = [...readSqlitePageRows(path, { run })];
    expect(rows.map((r) => [r.site, r.url, r.change])).toEqual([
      ['https://a.example/', 'https://a.example/p1', 'unchanged'],
      ['https://a.example/', 'https://a.example/p3', 'removed'],
      ['https://a.example/', 'https://a.example/p2', 'changed'],
      ['https://b.example/', 'https://b.example/listed-by-a', 'new'],
      [c, `${c}p`, 'removed'],
      ['https://d.example/', 'https://d.example/p', 'removed'],
    ]);
    expect(
      query(path, `SELECT site, count(*) FROM page_rows WHERE run_id = '${run}' GROUP BY site ORDER BY site`),
    ).toEqual([
      ['https://a.example/', 3],
      ['https://b.example/', 1],
      [c, 1],
      ['https://d.example/', 1],
    ]);
    expect(readSqliteRunSummary(path, run).sites.map((s) => s.site)).toEqual(['https://a.example/', c]);
  });

  it('migrates a schema 2 file in place: no row rewritten, every row read as before, blocks beside them', async () => {
    const path = join(dir, 'two.sqlite');
    copyFileSync(SCHEMA_2, path);
    const columns = `rowid, site_run, ${PAGE_COLUMNS.filter((c) => c !== 'site').join(', ')}`;
    const stored = query(path, `SELECT ${columns} FROM page_data`);
    const view = `SELECT ${EXACT} FROM page_rows`;
    const before = query(path, view);
    expect(before).toHaveLength(11);

    const store = openSqliteStore(path, { resume: true });
    expect([...store.sink.done]).toEqual(['https://a.example/']);
    const c = 'https://c.example/';
    const line = (u: string, sitemap = `${c}s.xml`) =>
      `{"site":"${c}","sitemap":"${sitemap}","url":"${c}${u}","priority":0.5,"lastModified":"2026-11-20",` +
      `"changeFrequency":null,"newsStory":null,"images":null,"alternates":null,"change":"unchanged"}\n`;
    const out = store.sink.begin(c);
    out.pageLines?.(Buffer.from(line('h1') + line('h2')), 2);
    out.pageLine?.(JSON.stringify({ site: c, sitemap: `${c}s.xml`, url: `${c}gone`, change: 'removed' }));
    out.pageLines?.(Buffer.from(line('t1', `${c}t.xml`)), 1);
    await out.commit({ ...siteResult(c), pages: 4 });
    await store.close();

    expect(query(path, `SELECT value FROM meta WHERE key = 'results_schema'`)).toEqual([['3']]);
    expect(query(path, `SELECT ${columns} FROM page_data WHERE rowid <= ${stored.length}`)).toEqual(stored);
    // Two block rows and the removed page's row.
    expect(query(path, 'SELECT count(*) FROM page_data')).toEqual([[stored.length + 3]]);
    expect(query(path, `${view} WHERE site <> '${c}'`)).toEqual(before);
    const rows = [...readSqlitePageRows(path, { run: store.runId, site: c })];
    const plain = { priority: 0.5, lastModified: '2026-11-20', changeFrequency: null };
    const none = { newsStory: null, images: null, alternates: null, change: 'unchanged' };
    expect(rows).toEqual([
      { site: c, sitemap: `${c}s.xml`, url: `${c}h1`, ...plain, ...none },
      { site: c, sitemap: `${c}s.xml`, url: `${c}h2`, ...plain, ...none },
      { site: c, sitemap: `${c}s.xml`, url: `${c}gone`, change: 'removed' },
      { site: c, sitemap: `${c}t.xml`, url: `${c}t1`, ...plain, ...none },
    ]);
    expect(readSqliteRunSummary(path, store.runId).changes).toContainEqual({
      site: c,
      change: 'unchanged',
      rows: 3,
    });
  });

  it('a site committed again in a run replaces its rows and only its own', async () => {
    const path = join(dir, 'again.sqlite');
    const store = openSqliteStore(path);
    for (const [site, urls] of [
      ['https://a.example/', ['p1', 'p2']],
      ['https://b.example/', ['p1']],
      ['https://a.example/', ['p3']],
    ] as const) {
      const out = store.sink.begin(site);
      for (const u of urls)
        out.pageLine?.(JSON.stringify({ site, sitemap: `${site}s.xml`, url: `${site}${u}` }));
      await out.commit(siteResult(site));
    }
    await store.close();
    expect(query(path, 'SELECT url FROM page_rows ORDER BY url')).toEqual([
      ['https://a.example/p3'],
      ['https://b.example/p1'],
    ]);
  });
});
