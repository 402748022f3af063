import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestPostgres, type TestPostgres } from '@usp-ts/test-postgres';
import { startTestRedis, type TestRedis } from '@usp-ts/test-redis';
import { type SiteFarm, startSiteFarm } from '@usp-ts/test-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnCli } from './cli-helpers.js';

// `usp worker --out postgres://…`: workers on a Redis queue of the test's own, all writing one
// PostgreSQL of the test's own, the farm's sites on their own loopback addresses. The store
// follows the queue's run, so a site walked twice in a run (a worker killed with -9, the list
// enqueued twice) is kept once, and what a plain SELECT counts is the answer.
let redis: TestRedis;
let pg: TestPostgres;
let farm: SiteFarm;
const dir = mkdtempSync(join(tmpdir(), 'usp-worker-pg-'));
const sitesFile = join(dir, 'sites.txt');
const children: ChildProcess[] = [];
const FAST = ['--allow-private-networks', '--timeout', '1500ms', '--retries', '1', '--site-deadline', '8s'];

beforeAll(async () => {
  [redis, pg] = await Promise.all([startTestRedis(), startTestPostgres()]);
  farm = await startSiteFarm({ sites: 30, seed: 23, octet: 86, pages: [20, 80], delayMs: 5 });
  writeFileSync(sitesFile, farm.sitesFile());
}, 60_000);
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
  await Promise.all([redis?.stop(), pg?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

interface Proc {
  child: ChildProcess;
  stderr: () => string;
  closed: Promise<number | null>;
}

function spawn(args: string[]): Proc {
  const child = spawnCli(args);
  children.push(child);
  let stderr = '';
  // Always drained: a full pipe would block the process.
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString('utf8');
  });
  const closed = once(child, 'close').then(([code]) => code as number | null);
  return { child, stderr: () => stderr, closed };
}

const worker = (queue: string, url: string, id: string, extra: string[] = []): Proc =>
  spawn([
    'worker',
    '--queue',
    redis.url,
    '--queue-name',
    queue,
    '--out',
    url,
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

const produce = (queue: string, extra: string[] = []): Proc =>
  spawn(['batch', '--queue', redis.url, '--queue-name', queue, ...extra, sitesFile]);

/** Resolves once the process has written a line matching `re` to stderr (no clock involved). */
function stderrLine(p: Proc, re: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const onData = () => {
      if (re.test(p.stderr())) {
        p.child.stderr?.off('data', onData);
        resolve();
      }
    };
    p.child.stderr?.on('data', onData);
    p.child.once('close', () => reject(new Error(`exited before ${re}: ${p.stderr()}`)));
  });
}

const count = async (url: string, sql: string): Promise<number> => Number((await pg.query(url, sql))[0]);
const runOf = (stderr: string): string => /\(run ([^)]+)\)/.exec(stderr)?.[1] ?? '?';
const homepages = () => farm.sites.map((s) => s.homepage).sort();

describe('usp worker --out postgres://', () => {
  it('three workers, one killed with -9 mid-run, the list enqueued twice: every page once by a plain SELECT count(*), all under the queue run', {
    timeout: 180_000,
  }, async () => {
    const url = await pg.createDatabase('kill');
    // One worker names the state's URL too (the same database); the others leave it out.
    const workers = [
      worker('kill', url, 'w1', ['--state', url]),
      worker('kill', url, 'w2'),
      worker('kill', url, 'w3'),
    ];
    const first = produce('kill');
    await stderrLine(workers[0], /usp: http:\/\/\S+: \w+/);
    workers[0].child.kill('SIGKILL');
    const second = produce('kill');
    const [a, b] = [await first.closed, await second.closed];
    expect(a, first.stderr()).toBe(0);
    expect(b, second.stderr()).toBe(0);
    for (const w of workers.slice(1)) {
      w.child.kill('SIGTERM');
      expect(await w.closed, w.stderr()).toBe(0);
    }
    // Both producers joined one queue run; the store kept no run of its own.
    const runs = await pg.query(url, 'SELECT run_id FROM runs');
    expect(runs).toHaveLength(1);
    const run = runs[0];

    const truth = farm.allPages();
    expect(await count(url, 'SELECT count(*) FROM page_rows')).toBe(truth.size);
    expect(await count(url, 'SELECT count(DISTINCT url) FROM page_rows')).toBe(truth.size);
    expect(await pg.query(url, 'SELECT site FROM site_rows ORDER BY site')).toEqual(homepages());
    expect(await pg.query(url, 'SELECT DISTINCT run_id FROM page_rows')).toEqual([run]);
    expect(await pg.query(url, 'SELECT DISTINCT change FROM page_rows')).toEqual(['new']);
    // The state beside the rows, saved as this run's version.
    expect(await pg.query(url, 'SELECT DISTINCT run_id FROM state_sites')).toEqual([run]);
    expect(await count(url, 'SELECT count(*) FROM state_sites')).toBeGreaterThan(20);
  });

  it('run after run on the same queue: the changed run writes exactly the changed and new pages, the run after removing pages exactly the removed ones', {
    timeout: 240_000,
  }, async () => {
    const url = await pg.createDatabase('days');
    const day = async (): Promise<string> => {
      const producer = produce('days', ['--new-run', '--no-wait']);
      expect(await producer.closed, producer.stderr()).toBe(0);
      const workers = ['a', 'b'].map((id) => worker('days', url, id, ['--exit-when-idle']));
      for (const w of workers) expect(await w.closed, w.stderr()).toBe(0);
      return runOf(producer.stderr());
    };
    const rows = (run: string, changes: string) =>
      pg.query(
        url,
        `SELECT url FROM page_rows WHERE run_id = '${run}' AND change IN (${changes}) ORDER BY url`,
      );

    const first = await day();
    expect(await count(url, `SELECT count(*) FROM page_rows WHERE run_id = '${first}'`)).toBe(
      farm.allPages().size,
    );
    const changed = farm.change(0.1, 5);
    const second = await day();
    expect(second).not.toBe(first);
    expect(await rows(second, `'new', 'changed'`)).toEqual(
      [...changed.changedPages, ...changed.newPages].sort(),
    );
    expect(await rows(second, `'removed'`)).toEqual([]);
    const removed = farm.remove(0.05, 7);
    expect(removed.size).toBeGreaterThan(10);
    const third = await day();
    expect(await rows(third, `'removed'`)).toEqual([...removed].sort());
    expect(await rows(third, `'new', 'changed'`)).toEqual([]);
  });

  it('usp batch --out postgres://: one process, rows and state in the database; the next run (--out postgres: and PG*) writes no page', {
    timeout: 120_000,
  }, async () => {
    const url = await pg.createDatabase('batch');
    const args = ['batch', '--out', url, '--sites', '8', ...FAST, sitesFile];
    const first = await runCli(args);
    expect(first.code, first.stderr).toBe(0);
    expect(await count(url, 'SELECT count(*) FROM page_rows')).toBe(farm.allPages().size);
    // The second run connects with the PG* variables alone (`--out postgres:`), as the READMEs show.
    const where = new URL(url);
    const again = await runCli(['batch', '--out', 'postgres:', '--sites', '8', ...FAST, sitesFile], {
      env: { PGHOST: where.hostname, PGPORT: where.port, PGUSER: 'postgres', PGDATABASE: 'batch' },
    });
    expect(again.code, again.stderr).toBe(0);
    expect(await count(url, 'SELECT count(*) FROM runs WHERE ended_at IS NOT NULL')).toBe(2);
    const latest = '(SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1)';
    expect(await count(url, `SELECT count(*) FROM page_rows WHERE run_id = ${latest}`)).toBe(0);
  });

  it('refuses a --state of another store, --gzip and batch --resume beside --out postgres:// (exit 2, one line)', async () => {
    const url = `${pg.url.replace(/\/postgres$/, '/nothing')}`;
    const other = await runCli([
      'worker',
      '--queue',
      redis.url,
      '--out',
      url,
      '--state',
      join(dir, 's.sqlite'),
    ]);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/keeps the state in the same database: leave out --state/);
    const gzip = await runCli(['batch', '--out', url, '--gzip', sitesFile]);
    expect(gzip.code).toBe(2);
    expect(gzip.stderr).toMatch(/--gzip/);
    const resume = await runCli(['batch', '--out', url, '--resume', sitesFile]);
    expect(resume.code).toBe(2);
    expect(resume.stderr).toMatch(/--resume: is for files/);
  });
});
