import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestRedis, type TestRedis } from '@usp-ts/test-redis';
import { type SiteFarm, startSiteFarm } from '@usp-ts/test-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI, cliEnv, runCli, spawnCli } from './cli-helpers.js';
import { until } from './tree-helpers.js';

// Two writers on one output directory: the second is refused at once, naming the first; a lock
// left by a run killed with -9 is taken over. Real processes, real sites on 127.84.x.y.
let farm: SiteFarm;
const dir = mkdtempSync(join(tmpdir(), 'usp-lock-'));
const sitesFile = join(dir, 'sites.txt');
const children: ChildProcess[] = [];
const FAST = ['--allow-private-networks', '--timeout', '1500ms', '--retries', '1', '--site-deadline', '4s'];

beforeAll(async () => {
  // Slow answers: the first run is still writing when the second starts.
  farm = await startSiteFarm({ sites: 20, seed: 17, octet: 84, pages: [40, 200], delayMs: 40 });
  writeFileSync(sitesFile, farm.sitesFile());
});
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGKILL');
      await once(c, 'close');
    }
  }
});
afterAll(async () => {
  await farm?.close();
  rmSync(dir, { recursive: true, force: true });
});

const rowsOf = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { site: string; url: string; sitemap: string });

const HOLDER = (pid: number) =>
  new RegExp(
    `^usp: error: .* is being written by another run \\(pid ${pid} on ${hostname()} since \\d{4}-\\d\\d-\\d\\dT[^)]+\\)\\n$`,
  );

describe('one writer per output directory', () => {
  it('usp batch: a second run exits 1 at once naming the first; after the first is killed -9, --resume takes over and ends with every site and page once', async () => {
    const out = join(dir, 'batch');
    const args = ['batch', '--out', out, '--sites', '2', ...FAST, sitesFile];
    const first = spawnCli(args);
    children.push(first);
    await until(() => existsSync(join(out, 'journal.ndjson')));

    for (const second of [args, [...args, '--resume']]) {
      const r = await runCli(second);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(HOLDER(first.pid as number));
    }

    first.kill('SIGKILL');
    await once(first, 'close');
    expect(existsSync(join(out, '.lock'))).toBe(true);
    const resumed = await runCli([...args, '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(existsSync(join(out, '.lock'))).toBe(false);
    const sites = rowsOf(join(out, 'sites.ndjson')).map((s) => s.site);
    expect(sites.sort()).toEqual(farm.sites.map((s) => s.homepage).sort());
    const pages = rowsOf(join(out, 'pages.ndjson'));
    const keys = pages.map((p) => `${p.sitemap} ${p.url}`);
    expect(keys.length).toBe(new Set(keys).size);
    expect(new Set(pages.map((p) => p.url))).toEqual(farm.allPages());
  });

  it('usp worker: a second worker with the same --worker-id exits 1 naming the first', async () => {
    let redis: TestRedis | null = null;
    try {
      redis = await startTestRedis();
      const out = join(dir, 'workers');
      const args = ['worker', '--queue', redis.url, '--out', out, '--worker-id', 'w1', ...FAST];
      const first = spawn(process.execPath, [CLI, ...args], { stdio: 'ignore', env: cliEnv() });
      children.push(first);
      await until(() => existsSync(join(out, 'w1', '.lock')));
      const r = await runCli(args);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(HOLDER(first.pid as number));
      // Another id is another directory: it runs.
      const other = spawn(process.execPath, [CLI, ...args.slice(0, -FAST.length - 1), 'w2', ...FAST], {
        stdio: 'ignore',
        env: cliEnv(),
      });
      children.push(other);
      await until(() => existsSync(join(out, 'w2', '.lock')));
    } finally {
      for (const c of children.splice(0)) {
        c.kill('SIGKILL');
        await once(c, 'close');
      }
      await redis?.stop();
    }
  });

  it('usp worker refuses a --worker-id that is not a plain name', async () => {
    for (const id of ['..', '.', '.hidden', 'a/b', '../x', '']) {
      const r = await runCli([
        'worker',
        '--queue',
        'redis://127.0.0.1:1',
        '--out',
        join(dir, 'w'),
        '--worker-id',
        id,
      ]);
      expect(r.code, id).toBe(2);
      expect(r.stderr, id).toMatch(/--worker-id expects a plain name/);
    }
  });
});
