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

describe('results schema 2', () => {
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
