import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PageRow, SiteResult } from '@usp-ts/batch';
import { openSqliteStore } from '@usp-ts/state-sqlite';
import { openPostgresStore } from '@usp-ts/store-postgres';
import { startTestPostgres, type TestPostgres } from '@usp-ts/test-postgres';
import { startSiteFarm, startTestServer } from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnCli, writeAnsweringSites } from './cli-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'usp-export-'));
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
const listed = (site: string, path: string, change: 'new' | 'changed' | 'unchanged'): PageRow => ({
  site,
  sitemap: `${site}sitemap.xml`,
  url: `${site}${path}`,
  priority: 0.5,
  lastModified: '2026-11-28',
  changeFrequency: null,
  newsStory: null,
  images: null,
  alternates: [{ hreflang: 'de', href: `${site}de/${path}` }],
  change,
});
const removed = (site: string, path: string): PageRow => ({
  site,
  sitemap: `${site}sitemap.xml`,
  url: `${site}${path}`,
  change: 'removed',
});
const result = (site: string): SiteResult => ({
  site,
  status: 'ok',
  reason: null,
  pages: 3,
  sitemaps: 1,
  requests: 2,
  notModified: 0,
  skipped: 0,
  bytes: 10,
  ms: 1,
});
const ROWS = [
  listed(A, 'new-1', 'new'),
  listed(A, 'edited,"q"', 'changed'),
  removed(A, 'gone'),
  listed(B, 'same', 'unchanged'),
];

async function fill(store: {
  sink: { begin(site: string): { page(r: PageRow): void; commit(r: SiteResult): Promise<void> } };
}) {
  for (const site of [A, B]) {
    const out = store.sink.begin(site);
    for (const r of ROWS.filter((x) => x.site === site)) out.page(r);
    await out.commit(result(site));
  }
}

describe('usp export', () => {
  it('writes the latest run of an SQLite store as NDJSON, filtered by change and site', async () => {
    const file = join(dir, 'results.sqlite');
    const old = openSqliteStore(file);
    const out = old.sink.begin(A);
    out.page(listed(A, 'from-yesterday', 'new'));
    await out.commit(result(A));
    await old.close();
    const store = openSqliteStore(file);
    await fill(store);
    await store.close();
    const all = await runCli(['export', file]);
    expect(all.code).toBe(0);
    expect(
      all.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(ROWS);
    const picked = await runCli(['export', `sqlite:${file}`, '--change', 'new,removed', '--site', A]);
    expect(
      picked.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).url),
    ).toEqual([`${A}new-1`, `${A}gone`]);
    const first = await runCli(['export', file, '--run', old.runId]);
    expect(
      first.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).url),
    ).toEqual([`${A}from-yesterday`]);
  });

  it('writes a PostgreSQL store as CSV, quoted, the removed rows with their URL', async () => {
    const url = await pg.createDatabase('export_csv');
    const store = await openPostgresStore({ url, runId: 'day-2' });
    await fill(store);
    await store.close();
    const r = await runCli([
      'export',
      url,
      '--run',
      'day-2',
      '--change',
      'changed',
      '--change',
      'removed',
      '-f',
      'csv',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      'site,sitemap,url,change,priority,lastModified,changeFrequency,newsTitle,newsPublishDate,images,alternates,extensions',
      `${A},${A}sitemap.xml,"${A}edited,""q""",changed,0.5,2026-11-28,,,,,"de=${A}de/edited,""q""",`,
      `${A},${A}sitemap.xml,${A}gone,removed,,,,,,,,`,
      '',
    ]);
    const u = new URL(url);
    const viaEnv = await runCli(['export', 'postgres:', '--change', 'unchanged'], {
      env: { PGHOST: u.hostname, PGPORT: u.port, PGUSER: 'postgres', PGDATABASE: 'export_csv' },
    });
    expect(viaEnv.stdout.trim()).toBe(JSON.stringify(ROWS[3]));
  });

  it('refuses an unknown change as a usage error, and a missing store in one line', async () => {
    const bad = await runCli(['export', join(dir, 'x.sqlite'), '--change', 'gone']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--change: "gone" is not one of new, changed, unchanged, removed/);
    const missing = await runCli(['export', join(dir, 'none.sqlite')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`usp: error: cannot open ${join(dir, 'none.sqlite')}: no such file\n`);
  });

  it('a store of a scheme no driver takes is a usage error naming the forms, in export and report alike', async () => {
    for (const command of ['export', 'report']) {
      const r = await runCli([command, 'redis://127.0.0.1:1/']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.split('\n').at(-2)).toBe(
        'usp: error: argument store: the scheme redis: is not supported here ("redis://127.0.0.1:1/"); expected FILE.sqlite, sqlite:FILE, postgres://USER@HOST[:PORT]/DB, postgres:',
      );
    }
  });
});

describe('usp batch --out FILE.sqlite', () => {
  it('keeps the rows and the state in one file: a second run says nothing new, export reads both runs', async () => {
    const farm = await startSiteFarm({ sites: 6, seed: 33, bigSites: 0 });
    try {
      const sites = join(dir, 'sites.txt');
      writeAnsweringSites(sites, farm);
      const file = join(dir, 'batch.sqlite');
      const net = ['--allow-private-networks', '--timeout', '1500ms', '--retries', '1', '--no-progress'];
      const first = await runCli(['batch', '--out', file, ...net, sites]);
      expect(first.code).toBe(0);
      const fresh = (await runCli(['export', file])).stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const truth = farm.allPages();
      expect(new Set(fresh.map((r) => r.url))).toEqual(truth);
      expect(fresh.every((r) => r.change === 'new')).toBe(true);
      const second = await runCli(['batch', '--out', `sqlite:${file}`, ...net, sites]);
      expect(second.code).toBe(0);
      expect((await runCli(['export', file, '--change', 'new,changed,removed'])).stdout).toBe('');
      const refused = await runCli(['batch', '--out', file, '--state', join(dir, 's.sqlite'), ...net, sites]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/keeps the state in the same file: leave out --state/);
    } finally {
      await farm.close();
    }
  });

  it('a run stopped with Ctrl-C stays unfinished: --resume goes on with it and ends with every site once', async () => {
    const page = (origin: string, path: string) =>
      `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${origin}${path}</loc></url></urlset>`;
    const xml = { 'content-type': 'application/xml' };
    const quick = await startTestServer();
    const slow = await startTestServer();
    try {
      quick.route('/robots.txt', { body: `Sitemap: ${quick.origin}/s.xml\n` });
      quick.route('/s.xml', { headers: xml, body: page(quick.origin, '/q') });
      // The slow site hangs on its first robots.txt (the run is stopped there), then answers.
      let first = true;
      slow.route('/robots.txt', (_req, res) => {
        if (first) {
          first = false;
          return;
        }
        res.end(`Sitemap: ${slow.origin}/s.xml\n`);
      });
      slow.route('/s.xml', { headers: xml, body: page(slow.origin, '/s') });
      const sites = join(dir, 'ctrl-c.txt');
      writeFileSync(sites, `${quick.origin}/\n${slow.origin}/\n`);
      const file = join(dir, 'ctrl-c.sqlite');
      const args = [
        'batch',
        '--out',
        file,
        '-v',
        '--allow-private-networks',
        '--timeout',
        '5m',
        '--no-progress',
        sites,
      ];
      const child = spawnCli(args);
      let err = '';
      child.stderr?.setEncoding('utf8').on('data', (d: string) => {
        err += d;
        // Once the quick site is committed (its line is said after its commit), the slow one hangs.
        if (err.includes(`usp: ${quick.origin}/: ok`)) child.kill('SIGINT');
      });
      const [code] = (await once(child, 'close')) as [number | null];
      expect(code, err).toBe(130);
      const resumed = await runCli([...args, '--resume']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toMatch(/usp batch: 2 sites \(1 ok, 1 done before, resumed\)/);
      // One run, each site's page once.
      const rows = (await runCli(['export', file])).stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as PageRow);
      // Sorted both sides: the two servers' ports are random.
      expect(rows.map((r) => r.url).sort()).toEqual([`${quick.origin}/q`, `${slow.origin}/s`].sort());
    } finally {
      await quick.close();
      await slow.close();
    }
  });
});
