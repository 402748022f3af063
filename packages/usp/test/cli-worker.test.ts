import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestRedis, type TestRedis } from '@usp-ts/test-redis';
import { type SiteFarm, startSiteFarm } from '@usp-ts/test-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnCli } from './cli-helpers.js';

// The distributed mode end to end: a Redis of the test's own, ~50 sites on their own loopback
// addresses (the site farm: urlsets, indexes, gzip, dead, hung and refused hosts), `usp worker`
// processes and the `usp batch --queue` producer, against `usp batch` on the same sites.
let redis: TestRedis;
let farm: SiteFarm;
const dir = mkdtempSync(join(tmpdir(), 'usp-worker-'));
const sitesFile = join(dir, 'sites.txt');
const children: ChildProcess[] = [];

const FAST = ['--allow-private-networks', '--timeout', '1500ms', '--retries', '1', '--site-deadline', '4s'];

interface Row {
  site: string;
  url: string;
  sitemap?: string;
  change?: string;
}

beforeAll(async () => {
  // Persistent, so that the restart test keeps the queue (as a production Redis would).
  redis = await startTestRedis({ persistent: true });
  farm = await startSiteFarm({ sites: 50, seed: 13, octet: 81, pages: [20, 80], delayMs: 5 });
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
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A worker directory's committed rows, as the README tells readers to take them: each file up to
 * the offsets of the last complete line of journal.ndjson (what a kill left past them is a site
 * cut off mid-commit, walked again by another worker).
 */
function committed(workerDir: string, file: 'pages' | 'sites'): Row[] {
  let end = 0;
  for (const line of readFileSync(join(workerDir, 'journal.ndjson'), 'utf8').split('\n')) {
    try {
      const entry = JSON.parse(line) as { type: string; offsets?: Record<string, number> };
      if (entry.type === 'site' && entry.offsets !== undefined) end = entry.offsets[file];
    } catch {
      // a torn last line
    }
  }
  const path = join(workerDir, `${file}.ndjson`);
  if (!existsSync(path)) return [];
  return readFileSync(path)
    .subarray(0, end)
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Row);
}

function allWorkers(out: string, file: 'pages' | 'sites'): Row[] {
  return readdirSync(out).flatMap((id) => committed(join(out, id), file));
}

/**
 * The README's reader rule for a kill: a worker killed between committing a site and BullMQ
 * recording it leaves that site complete in two workers' files; a reader keeps one copy (here the
 * copy of the worker that was not killed). Returns the rows so kept, and the sites found twice.
 */
function keepOneCopy(out: string, killed: string): { sites: Row[]; pages: Row[]; twice: string[] } {
  const owner = new Map<string, string>();
  const twice: string[] = [];
  const ids = readdirSync(out).sort((a, b) => Number(a === killed) - Number(b === killed));
  for (const id of ids)
    for (const row of committed(join(out, id), 'sites')) {
      if (owner.has(row.site)) twice.push(`${row.site} in ${owner.get(row.site)} and ${id}`);
      else owner.set(row.site, id);
    }
  const kept = (file: 'pages' | 'sites') =>
    ids.flatMap((id) => committed(join(out, id), file).filter((r) => owner.get(r.site) === id));
  return { sites: kept('sites'), pages: kept('pages'), twice };
}

const keys = (rows: Row[]) => rows.map((r) => `${r.sitemap} ${r.url}`).sort();

function worker(queueName: string, out: string, id: string, extra: string[] = []): ChildProcess {
  const child = spawnCli([
    'worker',
    '--queue',
    redis.url,
    '--queue-name',
    queueName,
    '--out',
    out,
    '--worker-id',
    id,
    '--sites',
    '4',
    '--lock-duration',
    '3s',
    '-v',
    ...FAST,
    ...extra,
  ]);
  children.push(child);
  // Listened to at once: a worker may end while the test waits on another.
  closed.set(
    child,
    once(child, 'close').then(([code]) => code as number | null),
  );
  stderrOf.set(child, '');
  // Always drained: a full pipe would block the worker.
  child.stderr?.on('data', (d: Buffer) => stderrOf.set(child, stderrOf.get(child) + d.toString('utf8')));
  return child;
}

const stderrOf = new Map<ChildProcess, string>();
const closed = new Map<ChildProcess, Promise<number | null>>();

/** Resolves once the process has written a line matching `re` to stderr (no clock involved). */
function stderrLine(child: ChildProcess, re: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const onData = () => {
      if (re.test(stderrOf.get(child) ?? '')) {
        child.stderr?.off('data', onData);
        resolve();
      }
    };
    child.stderr?.on('data', onData);
    child.once('close', () => reject(new Error(`exited before ${re}: ${stderrOf.get(child)}`)));
  });
}

async function stop(child: ChildProcess): Promise<number | null> {
  child.kill('SIGTERM');
  return closed.get(child) ?? null;
}

describe('usp worker and usp batch --queue', () => {
  it('three workers (one killed with -9 mid-run) give the pages of usp batch, each once by the README reader rule, the per-host limit held across workers', {
    timeout: 180_000,
  }, async () => {
    const local = join(dir, 'local');
    const alone = await runCli([
      'batch',
      '--out',
      local,
      '--sites',
      '8',
      '--per-host',
      '1',
      ...FAST,
      sitesFile,
    ]);
    expect(alone.code, alone.stderr).toBe(0);
    const expected = keys(committed(local, 'pages'));

    farm.resetCounters();
    const out = join(dir, 'distributed');
    const workers = ['w1', 'w2', 'w3'].map((id) => worker('kill', out, id, ['--per-host', '1']));
    const producer = spawnCli(['batch', '--queue', redis.url, '--queue-name', 'kill', sitesFile]);
    children.push(producer);
    let producerErr = '';
    producer.stderr?.on('data', (d: Buffer) => {
      producerErr += d.toString('utf8');
    });
    // Once w1 has finished a site (reported to BullMQ), it has others in flight: kill it there.
    await stderrLine(workers[0], /usp: http:\/\/\S+: \w+/);
    workers[0].kill('SIGKILL');
    const [code] = await once(producer, 'close');
    expect(code, producerErr).toBe(0);
    expect(producerErr).toMatch(/usp batch: 50 sites \(/);
    expect(await stop(workers[1])).toBe(0);
    expect(await stop(workers[2])).toBe(0);

    const view = keepOneCopy(out, 'w1');
    // Only the killed worker can share a site with another, and only in the one-round-trip window.
    for (const pair of view.twice) expect(pair).toMatch(/ and w1$/);
    expect(view.twice.length).toBeLessThanOrEqual(4); // w1 had at most --sites 4 in flight
    expect(view.sites.map((r) => r.site).sort()).toEqual(farm.sites.map((s) => s.homepage).sort());
    expect(keys(view.pages)).toEqual(expected);
    expect(farm.totals().maxInFlightPerHost).toBe(1);
  });

  it('goes on when Redis restarts mid-run: nothing lost, nothing twice', { timeout: 180_000 }, async () => {
    const out = join(dir, 'restart');
    const workers = ['r1', 'r2'].map((id) => worker('restart', out, id));
    const producer = spawnCli(['batch', '--queue', redis.url, '--queue-name', 'restart', sitesFile]);
    children.push(producer);
    let producerErr = '';
    producer.stderr?.on('data', (d: Buffer) => {
      producerErr += d.toString('utf8');
    });
    await stderrLine(workers[0], /usp: http:\/\/\S+: \w+/);
    await redis.restart();
    const [code] = await once(producer, 'close');
    expect(code, producerErr).toBe(0);
    expect(producerErr).toMatch(/usp batch: 50 sites \(/);
    for (const w of workers) expect(await stop(w)).toBe(0);
    expect(
      allWorkers(out, 'sites')
        .map((r) => r.site)
        .sort(),
    ).toEqual(farm.sites.map((s) => s.homepage).sort());
    const pages = keys(allWorkers(out, 'pages'));
    expect(new Set(pages).size).toBe(pages.length);
  });

  it('with the state in Redis, a second run fetches only what changed and emits exactly the changed pages', {
    timeout: 240_000,
  }, async () => {
    const state = ['--state', redis.url];
    const run = async (name: string) => {
      const queued = await runCli([
        'batch',
        '--queue',
        redis.url,
        '--queue-name',
        name,
        '--no-wait',
        sitesFile,
      ]);
      expect(queued.code, queued.stderr).toBe(0);
      const out = join(dir, name);
      const workers = ['a', 'b'].map((id) => worker(name, out, id, [...state, '--exit-when-idle']));
      for (const w of workers) expect(await closed.get(w), stderrOf.get(w)).toBe(0);
      return out;
    };
    farm.resetCounters();
    const first = await run('day1');
    const firstBytes = farm.totals().bytesSent;
    expect(allWorkers(first, 'pages').every((p) => p.change === 'new')).toBe(true);

    farm.resetCounters();
    const unchanged = await run('day2');
    expect(allWorkers(unchanged, 'pages')).toEqual([]);
    expect(farm.totals().bytesSent).toBeLessThan(firstBytes * 0.02);

    const change = farm.change(0.1, 3);
    const third = await run('day3');
    const emitted = allWorkers(third, 'pages').filter((p) => p.change !== 'unchanged');
    expect(new Set(emitted.map((p) => p.url))).toEqual(new Set([...change.changedPages, ...change.newPages]));
  });

  it('refuses the walk options on the producer, and a worker without --queue', async () => {
    const r = await runCli(['batch', '--queue', redis.url, '--out', join(dir, 'x'), sitesFile]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--out belongs to the workers/);
    const w = await runCli(['worker', '--out', join(dir, 'x')]);
    expect(w.code).toBe(2);
    expect(w.stderr).toMatch(/required: --queue/);
    const bad = await runCli(['worker', '--queue', 'http://127.0.0.1:1', '--out', join(dir, 'x')]);
    expect(bad.code).toBe(2);
  });
});
