import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PageRow, SiteResult } from '@usp-ts/batch';
import { openSqliteStore } from '@usp-ts/state-sqlite';
import { openPostgresStore } from '@usp-ts/store-postgres';
import { startTestPostgres, type TestPostgres } from '@usp-ts/test-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'usp-report-stores-'));
let pg: TestPostgres;
beforeAll(async () => {
  pg = await startTestPostgres();
}, 60_000);
afterAll(async () => {
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const A = 'https://a.example/';
const B = 'https://b.example/';
const page = (site: string, path: string, change: 'new' | 'changed' | 'unchanged'): PageRow => ({
  site,
  sitemap: `${site}sitemap.xml`,
  url: `${site}${path}`,
  priority: 0.5,
  lastModified: null,
  changeFrequency: null,
  newsStory: null,
  images: null,
  alternates: null,
  change,
});
const result = (site: string, status: SiteResult['status'], pages: number): SiteResult => ({
  site,
  status,
  reason: status === 'ok' ? null : `${site}robots.txt: 503 Service Unavailable`,
  pages,
  sitemaps: 1,
  requests: 3,
  notModified: 1,
  skipped: 0,
  bytes: 2048,
  ms: status === 'ok' ? 120 : 40,
});

type Store = {
  sink: { begin(site: string): { page(r: PageRow): void; commit(r: SiteResult): Promise<void> } };
};

async function fill(store: Store): Promise<void> {
  const a = store.sink.begin(A);
  for (const r of [page(A, '1', 'new'), page(A, '2', 'new'), page(A, '3', 'changed')]) a.page(r);
  a.page({ site: A, sitemap: `${A}sitemap.xml`, url: `${A}gone`, change: 'removed' });
  await a.commit(result(A, 'ok', 4));
  await store.sink.begin(B).commit(result(B, 'unreachable', 0));
}

/** The figures a report shows, read from its HTML (the browser tests check the same page renders). */
function figures(html: string): Record<string, string> {
  return Object.fromEntries(
    [...html.matchAll(/data-total="([^"]+)"><b[^>]*>([^<]*)</g)].map((m) => [m[1], m[2]]),
  );
}

describe('usp report of a result store', () => {
  it('reports the latest run of an SQLite store as a batch directory is reported', async () => {
    const file = join(dir, 'results.sqlite');
    const store = openSqliteStore(file);
    await fill(store);
    await store.close();
    const out = join(dir, 'sqlite.html');
    const r = await runCli(['report', file, '-o', out]);
    expect(r.code, r.stderr).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(figures(html)).toMatchObject({
      sites: '2',
      'not-ok': '1',
      pages: '4',
      new: '2',
      changed: '1',
      removed: '1',
    });
    expect(html).toContain('data-label="unreachable" data-value="1"');
    expect(html).toContain('unreachable: &lt;url&gt;: N Service Unavailable');
  });

  it('reports a run of a PostgreSQL store, named by --run', async () => {
    const url = await pg.createDatabase('report_store');
    const store = await openPostgresStore({ url, runId: 'day-2' });
    await fill(store);
    await store.close();
    const out = join(dir, 'pg.html');
    const r = await runCli(['report', url, '--run', 'day-2', '-o', out]);
    expect(r.code, r.stderr).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(figures(html)).toMatchObject({
      sites: '2',
      pages: '4',
      new: '2',
      removed: '1',
      'not-modified': '2',
    });
    expect(html).toContain('run day-2');
  });
});
