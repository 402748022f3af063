import { execFile, execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { sqliteStateStore } from '@usp-ts/state-sqlite';
import { type SiteFarm, startSiteFarm, startTestServer } from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { progressLine } from '../src/cli/batch-report.js';
import { createWebClient, walkPages } from '../src/index.js';
import { CLI, cliEnv, runCli, spawnCli } from './cli-helpers.js';
import { until } from './tree-helpers.js';

// ~50 sites, each on its own loopback address (127.78.0.x), built like the web (see the site
// farm): urlsets, indexes, gzipped sitemaps, dead sites, a host that never answers, a refused one.
let farm: SiteFarm;
const dir = mkdtempSync(join(tmpdir(), 'usp-batch-'));
const sitesFile = join(dir, 'sites.txt');

const FAST = ['--allow-private-networks', '--timeout', '1500ms', '--retries', '1', '--site-deadline', '4s'];

interface Row {
  site: string;
  url: string;
  sitemap?: string;
  change?: string;
  status?: string | number | null;
  notModified?: boolean;
  skipped?: boolean;
  type?: string;
}

function rows(path: string): Row[] {
  if (!existsSync(path)) return [];
  const raw = readFileSync(path);
  const text = path.endsWith('.gz') ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Row);
}

const pageKeys = (rs: Row[]) => rs.map((r) => `${r.sitemap} ${r.url}`);

beforeAll(async () => {
  farm = await startSiteFarm({ sites: 50, seed: 7, octet: 78, pages: [20, 120] });
  writeFileSync(sitesFile, farm.sitesFile());
});
afterAll(async () => {
  await farm.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('usp batch', () => {
  it('walks every site once and lists the same pages as walkPages on each site', async () => {
    const out = join(dir, 'plain');
    const r = await runCli(['batch', '--out', out, '--sites', '8', ...FAST, sitesFile]);
    expect(r.stderr).toMatch(/usp batch: 50 sites/);
    expect(r.code).toBe(0);
    const sites = rows(join(out, 'sites.ndjson'));
    expect(sites.map((s) => s.site).sort()).toEqual(farm.sites.map((s) => s.homepage).sort());
    const byStatus = (st: string) => sites.filter((s) => s.status === st).map((s) => s.site);
    expect(byStatus('unreachable').sort()).toEqual(
      farm.sites
        .filter((s) => s.kind === 'hang' || s.kind === 'refuse')
        .map((s) => s.homepage)
        .sort(),
    );
    // Per site, the library's walk over the same sites gives the same pages.
    const client = createWebClient({ allowPrivateNetworks: true, retries: 1, requestTimeoutMs: 1500 });
    const expected: string[] = [];
    try {
      for (const s of farm.sites) {
        if (s.kind === 'hang' || s.kind === 'refuse') continue;
        for await (const { page, sitemap } of walkPages(s.homepage, { webClient: client, parseWorkers: 0 })) {
          expected.push(`${sitemap.url} ${page.url}`);
        }
      }
    } finally {
      await client.close();
    }
    const got = rows(join(out, 'pages.ndjson'));
    expect(pageKeys(got).sort()).toEqual(expected.sort());
    expect(new Set(got.map((p) => p.url))).toEqual(farm.allPages());
    expect(got.every((p) => p.change === undefined)).toBe(true);
  });

  it('never has more than --per-host requests in flight to one host', async () => {
    const slow = await startSiteFarm({ sites: 6, seed: 3, octet: 79, pages: [5, 10], delayMs: 30 });
    try {
      const file = join(dir, 'slow.txt');
      writeFileSync(file, slow.sitesFile());
      const r = await runCli([
        'batch',
        '--out',
        join(dir, 'polite'),
        '--per-host',
        '1',
        '--concurrency',
        '8',
        ...FAST,
        file,
      ]);
      expect(r.code).toBe(0);
      const t = slow.totals();
      expect(t.requests).toBeGreaterThan(20);
      expect(t.maxInFlightPerHost).toBe(1);
    } finally {
      await slow.close();
    }
  });

  it('is incremental with --state: 304s replay robots.txt and indexes, only changed pages come out, marked', async () => {
    const state = join(dir, 'state.sqlite');
    const run = async (name: string) => {
      const out = join(dir, name);
      const r = await runCli(['batch', '--out', out, '--state', state, '--sites', '8', ...FAST, sitesFile]);
      expect(r.code, r.stderr).toBe(0);
      return { pages: rows(join(out, 'pages.ndjson')), sitemaps: rows(join(out, 'sitemaps.ndjson')) };
    };
    const first = await run('inc1');
    expect(new Set(first.pages.map((p) => p.url))).toEqual(farm.allPages());
    expect(first.pages.every((p) => p.change === 'new')).toBe(true);

    // Nothing changed: no page rows; robots.txt and indexes answered 304 and their children were walked.
    farm.resetCounters();
    const second = await run('inc2');
    expect(second.pages).toEqual([]);
    const robots = second.sitemaps.filter((s) => s.type === 'IndexRobotsTxtSitemap');
    const indexes = second.sitemaps.filter((s) => s.type === 'IndexXMLSitemap');
    expect(robots.length).toBeGreaterThan(20);
    expect(robots.every((s) => s.status === 304 && s.notModified === true)).toBe(true);
    expect(indexes.length).toBeGreaterThan(3);
    expect(indexes.every((s) => s.notModified === true)).toBe(true);
    const childrenOfIndexes = second.sitemaps.filter((s) =>
      indexes.some((i) => i.url === (s as { parent?: string }).parent),
    );
    expect(childrenOfIndexes.length).toBeGreaterThan(indexes.length);
    expect(farm.totals().bytesSent).toBe(0);

    // 20 % of the urlsets change (a lastmod moves, a page is added; indexes say so): exactly those come out.
    const change = farm.change(0.2, 11);
    const third = await run('inc3');
    const marked = (c: string) => new Set(third.pages.filter((p) => p.change === c).map((p) => p.url));
    expect(marked('changed')).toEqual(change.changedPages);
    expect(marked('new')).toEqual(change.newPages);
    expect(new Set(third.pages.map((p) => p.sitemap))).toEqual(new Set(change.changedSitemaps));

    // The indexes' lastmods moved with their children: proven honest, so unmoved children are not asked for.
    const change2 = farm.change(0.2, 12);
    const fourth = await run('inc4');
    const skipped = fourth.sitemaps.filter((s) => s.skipped === true);
    expect(skipped.length).toBeGreaterThan(0);
    expect(skipped.every((s) => !change2.changedSitemaps.includes(s.url))).toBe(true);
    const marked4 = (c: string) => new Set(fourth.pages.filter((p) => p.change === c).map((p) => p.url));
    expect(marked4('changed')).toEqual(change2.changedPages);
    expect(marked4('new')).toEqual(change2.newPages);
  });

  it('resumes a run killed with SIGKILL: every site once in sites.ndjson, every page once in pages.ndjson', async () => {
    const slow = await startSiteFarm({ sites: 24, seed: 5, octet: 80, pages: [40, 200], delayMs: 15 });
    try {
      const file = join(dir, 'resume.txt');
      writeFileSync(file, slow.sitesFile());
      const out = join(dir, 'resume');
      const state = join(dir, 'resume.sqlite');
      const args = ['batch', '--out', out, '--state', state, '--sites', '3', '--gzip', ...FAST, file];
      const child = spawnCli(args);
      // Killed once a few sites are in: mid-run, with walks in flight.
      const journal = join(out, 'journal.ndjson');
      while (!(existsSync(journal) && readFileSync(journal, 'utf8').split('\n').length > 6)) {
        await new Promise((r) => setTimeout(r, 20));
      }
      child.kill('SIGKILL');
      await once(child, 'close');
      const partial = rows(join(out, 'sites.ndjson.gz'));
      expect(partial.length).toBeLessThan(24);

      const refused = await runCli(args);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/holds a run already.*--resume/);

      const r = await runCli([...args, '--resume']);
      expect(r.code, r.stderr).toBe(0);
      const sites = rows(join(out, 'sites.ndjson.gz'));
      expect(sites.map((s) => s.site).sort()).toEqual(slow.sites.map((s) => s.homepage).sort());
      const pages = pageKeys(rows(join(out, 'pages.ndjson.gz')));
      expect(pages.length).toBe(new Set(pages).size);
      expect(new Set(rows(join(out, 'pages.ndjson.gz')).map((p) => p.url))).toEqual(slow.allPages());
    } finally {
      await slow.close();
    }
  });

  it('reports bad input lines as invalid rows and walks duplicates once', async () => {
    const file = join(dir, 'bad.txt');
    const one = farm.sites[0].homepage;
    writeFileSync(
      file,
      `# my sites\n\n${one}\nnot a url\n${one.toUpperCase()}x/../\nftp://example.com/\n${one}#again\n`,
    );
    const out = join(dir, 'bad');
    const r = await runCli(['batch', '--out', out, ...FAST, file]);
    expect(r.code).toBe(0);
    const sites = rows(join(out, 'sites.ndjson'));
    expect(sites.map((s) => [s.site, s.status])).toEqual(
      expect.arrayContaining([
        [one, expect.any(String)],
        ['not a url', 'invalid'],
        ['ftp://example.com/', 'invalid'],
      ]),
    );
    expect(sites).toHaveLength(3);
  });

  it('has summaries that add up: a repeated bad line is invalid each time in a fresh run, and resuming a finished run says all were done before', async () => {
    const file = join(dir, 'sums.txt');
    const [a, b] = farm.sites.filter((s) => s.kind === 'urlset').map((s) => s.homepage);
    writeFileSync(file, `${a}\nnot a url\n${b}\nnot a url\n${a}\n`);
    const out = join(dir, 'sums');
    const r = await runCli(['batch', '--out', out, ...FAST, file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^usp batch: 4 sites \(2 ok, 2 invalid\); \d+ pages, \d+ requests/);
    expect(rows(join(out, 'sites.ndjson')).filter((s) => s.status === 'invalid')).toHaveLength(2);
    const again = await runCli(['batch', '--out', out, '--resume', ...FAST, file]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/^usp batch: 4 sites \(4 done before, resumed\); 0 pages, 0 requests/);
  });

  it('walks a listed site on a private address without --allow-private-networks, refuses what its sitemaps point to elsewhere, naming the flag, and counts no request it did not send', async () => {
    const other = await startTestServer({ '/b.xml': { body: '<urlset/>' } });
    const home = await startTestServer();
    try {
      home.route('/robots.txt', { body: `Sitemap: ${home.origin}/a.xml\nSitemap: ${other.origin}/b.xml\n` });
      home.route('/a.xml', {
        body: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${home.origin}/p</loc></url></urlset>`,
      });
      const file = join(dir, 'private.txt');
      writeFileSync(file, `${home.origin}/\n`);
      const out = join(dir, 'private');
      const r = await runCli(['batch', '--out', out, '--timeout', '1500ms', '--retries', '1', '-v', file]);
      expect(r.code, r.stderr).toBe(0);
      const [site] = rows(join(out, 'sites.ndjson')) as unknown as { status: string; requests: number }[];
      expect(site.status).toBe('ok');
      expect(rows(join(out, 'pages.ndjson')).map((p) => p.url)).toEqual([`${home.origin}/p`]);
      const refused = rows(join(out, 'sitemaps.ndjson')).find(
        (m) => m.url === `${other.origin}/b.xml`,
      ) as unknown as {
        reason: string;
      };
      expect(refused.reason).toContain('(--allow-private-networks)');
      expect(`${r.stderr}${readFileSync(join(out, 'sitemaps.ndjson'), 'utf8')}`).not.toContain(
        'allowPrivateNetworks',
      );
      expect(other.requests).toEqual([]);
      expect(site.requests).toBe(home.requests.length);
    } finally {
      await other.close();
      await home.close();
    }
  });

  it('stops with exit 1 and one line on a locked or corrupt state file, deleting nothing', async () => {
    const corrupt = join(dir, 'corrupt.sqlite');
    const bytes = 'not a database\n'.repeat(500);
    writeFileSync(corrupt, bytes);
    const r1 = await runCli(['batch', '--out', join(dir, 'c1'), '--state', corrupt, ...FAST, sitesFile]);
    expect(r1.code).toBe(1);
    expect(r1.stderr.trim().split('\n')).toHaveLength(1);
    expect(r1.stderr).toMatch(/not a usable SQLite database/);
    expect(readFileSync(corrupt, 'utf8')).toBe(bytes);

    const lockedPath = join(dir, 'locked.sqlite');
    const holder = sqliteStateStore(lockedPath);
    try {
      const size = statSync(lockedPath).size;
      const r2 = await runCli(['batch', '--out', join(dir, 'c2'), '--state', lockedPath, ...FAST, sitesFile]);
      expect(r2.code).toBe(1);
      expect(r2.stderr).toMatch(/in use by another run/);
      expect(statSync(lockedPath).size).toBe(size);
    } finally {
      await holder.close();
    }
  });

  // Node's recursive mkdir spins for ever under /proc (ENOENT for a parent that exists).
  it.skipIf(!existsSync('/proc/self'))(
    'exits 1 with one line when --out cannot be created (under /proc), not spinning (skipped where there is no procfs)',
    async () => {
      const r = await runCli(['batch', '--out', '/proc/usp-test-no-such-dir/out', ...FAST, sitesFile]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(
        /^usp: error: cannot create the output directory \/proc\/usp-test-no-such-dir\/out: .*ENOENT/,
      );
    },
  );

  it('--queue with a Redis that is not there: exit 1 and one line, not retrying for ever', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    await new Promise<void>((resolve) => holder.close(() => resolve()));
    const r = await runCli(['batch', '--queue', `redis://127.0.0.1:${port}`, '--no-wait', sitesFile]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      new RegExp(`^usp: error: cannot reach Redis at redis://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`),
    );
  });

  it('walks in full with --full-every once the last full walk is older: every page out, marked, no 304', async () => {
    const few = farm.sites.filter((s) => s.kind === 'urlset' || s.kind === 'index').slice(0, 4);
    const file = join(dir, 'full-every.txt');
    writeFileSync(file, few.map((s) => s.homepage).join('\n'));
    const state = join(dir, 'full-every.sqlite');
    const run = async (name: string, extra: string[]) => {
      const out = join(dir, name);
      const r = await runCli(['batch', '--out', out, '--state', state, ...extra, ...FAST, file]);
      expect(r.code, r.stderr).toBe(0);
      return { pages: rows(join(out, 'pages.ndjson')), sitemaps: rows(join(out, 'sitemaps.ndjson')) };
    };
    const expected = new Set(few.flatMap((s) => [...s.urlsets.values()].flatMap((m) => [...m.keys()])));
    await run('fe1', []);
    // The last full walk is younger than 7 days: incremental, nothing changed, nothing out.
    const incremental = await run('fe2', ['--full-every', '7d']);
    expect(incremental.pages).toEqual([]);
    expect(incremental.sitemaps.some((s) => s.notModified === true)).toBe(true);
    // Older than 1 ms: every page again, each marked against the state; no validator sent.
    const full = await run('fe3', ['--full-every', '1ms']);
    expect(new Set(full.pages.map((p) => p.url))).toEqual(expected);
    expect(full.pages.every((p) => p.change === 'unchanged')).toBe(true);
    expect(full.sitemaps.every((s) => s.notModified === false && s.skipped === false)).toBe(true);
  });

  it('reads the sites from stdin with -', async () => {
    const few = farm.sites.filter((s) => s.kind === 'urlset').slice(0, 3);
    const out = join(dir, 'stdin');
    const r = await runCli(['batch', '--out', out, ...FAST, '-'], {
      input: `${few.map((s) => s.homepage).join('\n')}\n`,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^usp batch: 3 sites \(3 ok\)/);
    expect(
      rows(join(out, 'sites.ndjson'))
        .map((s) => s.site)
        .sort(),
    ).toEqual(few.map((s) => s.homepage).sort());
  });

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    'stops cleanly on %s: exits %i, keeps the sites done and drops the one cut off',
    async (signal, exitCode) => {
      const done = farm.sites.find((s) => s.kind === 'urlset');
      if (done === undefined) throw new Error('the farm has no urlset site');
      const hung = await startTestServer();
      const out = join(dir, `signal-${signal}`);
      const journal = join(out, 'journal.ndjson');
      try {
        let child: ReturnType<typeof spawnCli> | null = null;
        // The signal comes once the other site is committed and this one is waiting on its robots.txt.
        hung.route('/robots.txt', () => {
          void until(() => existsSync(journal) && readFileSync(journal, 'utf8').includes(done.homepage)).then(
            () => child?.kill(signal),
          );
        });
        const file = join(dir, `signal-${signal}.txt`);
        writeFileSync(file, `${done.homepage}\n${hung.origin}/\n`);
        child = spawnCli([
          'batch',
          '--out',
          out,
          '--sites',
          '2',
          ...FAST,
          '--site-deadline',
          '5m',
          '--timeout',
          '5m',
          file,
        ]);
        let err = '';
        child.stderr?.setEncoding('utf8').on('data', (d: string) => {
          err += d;
        });
        const [code] = (await once(child, 'close')) as [number | null];
        expect(code, err).toBe(exitCode);
        expect(err).toMatch(/^usp batch: 1 site \(1 ok\)/m);
        expect(err).not.toMatch(/\n\s+at /);
        expect(rows(join(out, 'sites.ndjson')).map((s) => s.site)).toEqual([done.homepage]);
        expect(new Set(rows(join(out, 'pages.ndjson')).map((p) => p.site))).toEqual(new Set([done.homepage]));
      } finally {
        await hung.close();
      }
    },
  );

  it('sends a site that gave no answer one probe next time (--probe-timeout), and -v says so, a line a site', async () => {
    const hang = farm.sites.find((s) => s.kind === 'hang')!;
    const ok = farm.sites.filter((s) => s.kind === 'urlset').slice(0, 2);
    const file = join(dir, 'probe.txt');
    writeFileSync(file, [hang, ...ok].map((s) => s.homepage).join('\n'));
    const state = join(dir, 'probe.sqlite');
    const first = await runCli(['batch', '--out', join(dir, 'probe1'), '--state', state, ...FAST, file]);
    expect(first.code, first.stderr).toBe(0);
    const r = await runCli([
      'batch',
      '-v',
      '--out',
      join(dir, 'probe2'),
      '--state',
      state,
      '--probe-timeout',
      '300ms',
      ...FAST,
      file,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const row = rows(join(dir, 'probe2', 'sites.ndjson')).find((x) => x.site === hang.homepage) as Row & {
      reason: string;
      requests: number;
    };
    expect(row.status).toBe('unreachable');
    expect(row.requests).toBe(1);
    expect(row.reason).toMatch(
      /robots\.txt: no answer within 300 ms \(one probe only: the site gave no answer on the previous run, at /,
    );
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(
      lines
        .slice(0, 3)
        .map((l) => l.split(': ')[1])
        .sort(),
    ).toEqual([hang, ...ok].map((s) => s.homepage).sort());
    expect(lines[3]).toMatch(/^usp batch: 3 sites \(/);
  });

  it('exits 2 on usage errors', async () => {
    const r = await runCli(['batch', sitesFile]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--out/);
  });
});

describe('usp batch progress line', () => {
  const p = {
    sitesDone: 4,
    sitesActive: 2,
    sitesSkipped: 1,
    pages: 1234,
    requests: 50,
    notModified: 7,
    bytes: 0,
    statuses: { ok: 3, unreachable: 1 },
  };

  it('shows sites done of the total, pages, requests/s, 304s, the sites not ok in the words of the summary, and the ETA', () => {
    // 5 sites left at 4 walked in 10 s: 12.5 s.
    expect(progressLine(p, { total: 10, elapsedMs: 10_000, columns: 200 })).toBe(
      'sites 5/10 (2 active) | pages 1234 | 5.0 req/s | 304s 7 | 1 unreachable | ETA 13s',
    );
    expect(progressLine({ ...p, sitesDone: 1 }, { total: 400, elapsedMs: 20_000, columns: 200 })).toMatch(
      /\| ETA 2h12m$/,
    );
    // Input from stdin: no total, no ETA.
    expect(progressLine(p, { total: null, elapsedMs: 10_000, columns: 200 })).toBe(
      'sites 5 (2 active) | pages 1234 | 5.0 req/s | 304s 7 | 1 unreachable',
    );
  });

  it('never wraps: the line is cut to one less than the terminal width', () => {
    expect(progressLine(p, { total: 10, elapsedMs: 10_000, columns: 20 })).toBe('sites 5/10 (2 activ');
  });

  const hasScript = (() => {
    try {
      execFileSync('script', ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();

  // util-linux's `script` runs the CLI on a pseudo-terminal: stderr is a TTY there.
  it.skipIf(!hasScript)(
    'is drawn on stderr when it is a terminal, and not with --no-progress (skipped without util-linux script)',
    async () => {
      const few = farm.sites.filter((s) => s.kind === 'urlset').slice(0, 3);
      const file = join(dir, 'tty.txt');
      writeFileSync(file, few.map((s) => s.homepage).join('\n'));
      const onTty = (name: string, extra: string[]) =>
        new Promise<string>((resolve, reject) => {
          const cmd = [
            process.execPath,
            CLI,
            'batch',
            '--out',
            join(dir, name),
            ...extra,
            ...FAST,
            file,
          ].join(' ');
          execFile('script', ['-qfec', cmd, '/dev/null'], { env: cliEnv() }, (err, stdout) =>
            err ? reject(err) : resolve(stdout),
          );
        });
      const shown = await onTty('tty1', []);
      expect(shown).toMatch(/\rsites \d\/3 \(\d active\) \| pages \d+ \| [\d.]+ req\/s \| 304s 0/);
      expect(shown).not.toMatch(/failed/);
      // Erased before the summary, which stays.
      expect(shown).toMatch(/\r\x1b\[Kusp batch: 3 sites \(3 ok\)/);
      const hidden = await onTty('tty2', ['--no-progress']);
      expect(hidden).toMatch(/usp batch: 3 sites \(3 ok\)/);
      expect(hidden).not.toMatch(/sites \d\/3/);
      expect(hidden).not.toContain('\x1b[K');
    },
  );
});
