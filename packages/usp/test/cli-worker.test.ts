import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestRedis, type TestRedis } from '@usp-ts/test-redis';
import { runNode, type SiteFarm, startSiteFarm } from '@usp-ts/test-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { V8_DEFAULT_INTERRUPT_BUDGET } from '../src/cli/batch-jit.js';
import { TUNES_JIT_OF_THIS_V8 } from '../src/cli/v8-flags.js';
import { CLI, cliEnv, runCli, spawnCli } from './cli-helpers.js';

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
let keep = false;
afterEach(async (context) => {
  // A failed run's worker directories stay for a look at their journals.
  if (context.task.result?.state === 'fail') keep = true;
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
  if (keep) process.stderr.write(`cli-worker test: kept ${dir}\n`);
  else rmSync(dir, { recursive: true, force: true });
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

interface JournalLine {
  type: string;
  site?: string;
  offsets?: Record<string, number>;
  token?: string;
  voids?: string[];
}

function journal(workerDir: string): JournalLine[] {
  const out: JournalLine[] = [];
  for (const line of readFileSync(join(workerDir, 'journal.ndjson'), 'utf8').split('\n')) {
    try {
      out.push(JSON.parse(line) as JournalLine);
    } catch {
      // a torn last line
    }
  }
  return out;
}

/**
 * The README's reader rule: in each worker directory, a site's copy is its lines between the
 * previous journal line's offsets and its own; a copy whose token some journal line (of any
 * worker) lists in `voids` is dropped. Returns the rows kept, and the sites found twice.
 */
function readerView(out: string): { sites: Row[]; pages: Row[]; twice: string[] } {
  const ids = readdirSync(out).sort();
  const voids = new Set(ids.flatMap((id) => journal(join(out, id)).flatMap((l) => l.voids ?? [])));
  const kept = { sites: [] as Row[], pages: [] as Row[] };
  const owner = new Map<string, string>();
  const twice: string[] = [];
  for (const id of ids) {
    const entries = journal(join(out, id)).filter((l) => l.type === 'site');
    for (const file of ['sites', 'pages'] as const) {
      const path = join(out, id, `${file}.ndjson`);
      const bytes = existsSync(path) ? readFileSync(path) : Buffer.alloc(0);
      let start = 0;
      for (const e of entries) {
        const end = e.offsets?.[file] ?? start;
        if (e.token === undefined || !voids.has(e.token)) {
          const rows = bytes
            .subarray(start, end)
            .toString('utf8')
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l) as Row);
          kept[file].push(...rows);
          if (file === 'sites') {
            for (const r of rows) {
              if (owner.has(r.site)) twice.push(`${r.site} in ${owner.get(r.site)} and ${id}`);
              else owner.set(r.site, id);
            }
          }
        }
        start = end;
      }
    }
  }
  return { ...kept, twice };
}

/**
 * For a failure message: what each worker's journal says about the sites missing from (or doubled
 * in) the reader view, and which of those copies the voids of any journal drop.
 */
function journalsOn(out: string, sites: readonly string[]): string {
  if (sites.length === 0) return '';
  const ids = readdirSync(out).sort();
  const voids = new Map<string, string>();
  for (const id of ids) {
    for (const l of journal(join(out, id))) for (const v of l.voids ?? []) voids.set(v, `${id} (${l.site})`);
  }
  const lines: string[] = [];
  for (const site of sites) {
    lines.push(`${site}:`);
    for (const id of ids) {
      for (const l of journal(join(out, id)).filter((e) => e.site === site)) {
        const by = l.token !== undefined ? voids.get(l.token) : undefined;
        lines.push(`  ${id}: ${JSON.stringify(l)}${by !== undefined ? ` voided by ${by}` : ''}`);
      }
    }
  }
  return lines.join('\n');
}

function missingSites(view: { sites: Row[] }, homepages: readonly string[]): string[] {
  const seen = new Set(view.sites.map((r) => r.site));
  return homepages.filter((h) => !seen.has(h));
}

const keys = (rows: Row[]) => rows.map((r) => `${r.sitemap} ${r.url}`).sort();

function worker(
  queueName: string,
  out: string,
  id: string,
  extra: string[] = [],
  env: Record<string, string> = {},
  url = redis.url,
): ChildProcess {
  const child = spawnCli(
    [
      'worker',
      '--queue',
      url,
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
    ],
    env,
  );
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

/** Starts the producer of the farm's sites on queue `name`; resolves with its exit code and stderr. */
function produce(name: string, url = redis.url): Promise<{ code: number | null; stderr: string }> {
  return startProducer(name, url).done;
}

/** The producer as a process too, for a test that waits on what it says. */
function startProducer(
  name: string,
  url = redis.url,
): { child: ChildProcess; done: Promise<{ code: number | null; stderr: string }> } {
  const producer = spawnCli(['batch', '--queue', url, '--queue-name', name, sitesFile]);
  children.push(producer);
  stderrOf.set(producer, '');
  producer.stderr?.on('data', (d: Buffer) =>
    stderrOf.set(producer, stderrOf.get(producer) + d.toString('utf8')),
  );
  const done = once(producer, 'close').then(([code]) => ({
    code: code as number | null,
    stderr: stderrOf.get(producer) ?? '',
  }));
  return { child: producer, done };
}

/**
 * The reader view of the workers' directories under `out` (the README's rule) holds every site
 * of the farm exactly once; a failure lists the journal lines of the sites in question.
 */
function wholeReaderView(out: string): { sites: Row[]; pages: Row[]; twice: string[] } {
  const view = readerView(out);
  const homepages = farm.sites.map((s) => s.homepage);
  const missing = missingSites(view, homepages);
  const twice = view.twice.map((t) => t.split(' ')[0]);
  expect(missing, `missing from the reader view:\n${journalsOn(out, missing)}`).toEqual([]);
  expect(view.twice, `twice in the reader view:\n${journalsOn(out, twice)}`).toEqual([]);
  expect(view.sites.map((r) => r.site).sort()).toEqual([...homepages].sort());
  return view;
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
    const producer = produce('kill');
    // Once w1 has finished a site (reported to BullMQ), it has others in flight: kill it there.
    await stderrLine(workers[0], /usp: http:\/\/\S+: \w+/);
    workers[0].kill('SIGKILL');
    const { code, stderr: producerErr } = await producer;
    expect(code, producerErr).toBe(0);
    expect(producerErr).toMatch(/usp batch: 50 sites \(/);
    expect(await stop(workers[1])).toBe(0);
    expect(await stop(workers[2])).toBe(0);

    const view = wholeReaderView(out);
    expect(keys(view.pages)).toEqual(expected);
    expect(farm.totals().maxInFlightPerHost).toBe(1);
  });

  it('a worker killed after writing a site and before BullMQ recorded it: the copy walked again wins; restarted, the killed worker drops its copy, and a reader drops the copy of one never restarted', {
    timeout: 180_000,
  }, async () => {
    const local = join(dir, 'local-once');
    const alone = await runCli(['batch', '--out', local, '--sites', '8', ...FAST, sitesFile]);
    expect(alone.code, alone.stderr).toBe(0);
    const expected = keys(committed(local, 'pages'));

    const out = join(dir, 'once');
    const fault = { NODE_OPTIONS: `--import ${new URL('./kill-after-commit.mjs', import.meta.url).href}` };
    // k1 and k3 die right after the journal line of their first site: k1 is restarted later, k3 never.
    // Their locks outlive them by 10 s, so neither takes over a site of the other before it dies.
    const killed = ['k1', 'k3'].map((id) => worker('once', out, id, ['--lock-duration', '10s'], fault));
    const producer = produce('once');
    for (const k of killed) {
      await closed.get(k);
      expect(k.signalCode, stderrOf.get(k)).toBe('SIGKILL');
    }
    const firstCopies = ['k1', 'k3'].map((id) => journal(join(out, id)).filter((l) => l.type === 'site'));
    for (const copies of firstCopies) expect(copies).toHaveLength(1);
    const k2 = worker('once', out, 'k2');
    const { code, stderr: producerErr } = await producer;
    expect(code, producerErr).toBe(0);
    expect(producerErr).toMatch(/usp batch: 50 sites \(/);
    expect(await stop(k2)).toBe(0);

    // Both killed copies are whole, and k2 walked their sites again: read naively, two sites twice.
    expect(allWorkers(out, 'sites')).toHaveLength(52);
    const k2Lines = journal(join(out, 'k2'));
    for (const [copy] of firstCopies) {
      expect(k2Lines.find((l) => l.site === copy.site)?.voids).toEqual([copy.token]);
    }
    // The reader rule: every site once, each page once, the pages of usp batch.
    const view = wholeReaderView(out);
    expect(keys(view.pages)).toEqual(expected);

    // Restarted under its id, k1 cuts its void copy out of its files: plain reading is exactly-once.
    const restarted = worker('once', out, 'k1', ['--exit-when-idle']);
    expect(await closed.get(restarted), stderrOf.get(restarted)).toBe(0);
    expect(stderrOf.get(restarted)).toContain(`usp: ${firstCopies[0][0].site}: copy dropped`);
    expect(committed(join(out, 'k1'), 'sites')).toEqual([]);
    expect(readFileSync(join(out, 'k1', 'pages.ndjson')).length).toBe(0);
    const plain = ['k1', 'k2'].flatMap((id) => committed(join(out, id), 'sites').map((r) => r.site));
    expect(new Set(plain).size).toBe(plain.length);
    expect(keys(readerView(out).pages)).toEqual(expected);
  });

  it('a worker walking one site at a time, killed after writing its second site: only that copy is void, its first site (completed) stays in the reader view', {
    timeout: 180_000,
  }, async () => {
    const out = join(dir, 'slot');
    // BullMQ gives a slot's next job the lock token of the job it just completed: the two copies of
    // k1 must not share a name, or voiding the second one drops the first site, walked only once.
    const fault = {
      NODE_OPTIONS: `--import ${new URL('./kill-after-commit.mjs', import.meta.url).href}`,
      USP_KILL_AFTER_SITES: '2',
    };
    const k1 = worker('slot', out, 'k1', ['--sites', '1'], fault);
    const producer = produce('slot');
    await closed.get(k1);
    expect(k1.signalCode, stderrOf.get(k1)).toBe('SIGKILL');
    const copies = journal(join(out, 'k1')).filter((l) => l.type === 'site');
    expect(copies).toHaveLength(2);
    const k2 = worker('slot', out, 'k2');
    const { code, stderr: producerErr } = await producer;
    expect(code, producerErr).toBe(0);
    expect(await stop(k2)).toBe(0);
    const k2Lines = journal(join(out, 'k2'));
    expect(k2Lines.find((l) => l.site === copies[1].site)?.voids).toEqual([copies[1].token]);
    expect(k2Lines.find((l) => l.site === copies[0].site)).toBeUndefined();
    wholeReaderView(out);
  });

  it('goes on when Redis restarts mid-run: nothing lost, nothing twice; one line when it goes away and one when it is back', {
    timeout: 180_000,
  }, async () => {
    const out = join(dir, 'restart');
    const workers = ['r1', 'r2'].map((id) => worker('restart', out, id));
    const producer = startProducer('restart');
    await stderrLine(workers[0], /usp: http:\/\/\S+: \w+/);
    // Down until the workers and the producer have said so (no clock), then up again on the same
    // port. Restarted as soon as the workers had said it, Redis was sometimes back before the
    // producer's next reconnect attempt under load, and the producer rightly said nothing.
    process.kill(redis.pid, 'SIGTERM');
    const away = new RegExp(`^usp: Redis at 127\\.0\\.0\\.1:${redis.port} went away; waiting$`, 'm');
    const producerAway = new RegExp(
      `^usp batch: Redis at 127\\.0\\.0\\.1:${redis.port} went away; waiting$`,
      'm',
    );
    await Promise.all([...workers.map((w) => stderrLine(w, away)), stderrLine(producer.child, producerAway)]);
    await redis.restart();
    const { code, stderr: producerErr } = await producer.done;
    expect(code, producerErr).toBe(0);
    expect(producerErr).toMatch(/usp batch: 50 sites \(/);
    for (const w of workers) expect(await stop(w)).toBe(0);
    for (const text of [...workers.map((w) => stderrOf.get(w) ?? ''), producerErr]) {
      expect(text).not.toMatch(/Unhandled error event|\n\s+at /);
      expect(text).not.toContain(`ECONNREFUSED 127.0.0.1:${redis.port}`);
      expect(text.match(/Redis at \S+ went away; waiting\n/g) ?? []).toHaveLength(1);
      expect(text.match(/Redis at \S+ is back\n/g) ?? []).toHaveLength(1);
    }
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

  it('a worker whose --out fills up stops with one line saying how to go on; started again once there is space, it ends the run: every site once, no page lost', {
    timeout: 180_000,
  }, async () => {
    const out = join(dir, 'full');
    // An emulated 40 KiB disk under --out (small-disk.mjs: a short write, then ENOSPC): a few sites fit.
    const smallDisk = {
      NODE_OPTIONS: `--import=${fileURLToPath(new URL('./small-disk.mjs', import.meta.url))}`,
      USP_SMALL_DISK_DIR: out,
      USP_SMALL_DISK_BYTES: String(40 * 1024),
    };
    const producer = startProducer('full');
    const full = worker('full', out, 'f', [], smallDisk);
    expect(await closed.get(full), stderrOf.get(full)).toBe(1);
    const said = stderrOf.get(full) ?? '';
    expect(said).toContain(`usp: worker f on full, writing ${join(out, 'f')}\n`);
    expect(said).not.toMatch(/\n\s+at /);
    expect(said.split('\n').filter((l) => l.startsWith('usp: error:'))).toEqual([
      expect.stringMatching(
        /^usp: error: no space left on the device of .*; free some space, then start the worker again with the same --out and --worker-id$/,
      ),
    ]);
    const again = worker('full', out, 'f');
    const { code, stderr } = await producer.done;
    expect(code, stderr).toBe(0);
    expect(stderr).toMatch(/usp batch: 50 sites \(/);
    expect(await stop(again)).toBe(0);
    const view = wholeReaderView(out);
    const pageKeys = keys(view.pages);
    expect(new Set(pageKeys).size).toBe(pageKeys.length);
    expect(new Set(view.pages.map((p) => p.url))).toEqual(farm.allPages());
  });

  it('--exit-when-idle drains the queue: started beside its producer, the worker exits only after every site', {
    timeout: 180_000,
  }, async () => {
    // Three rounds, each on a queue of its own: the worker used to find the queue empty before
    // the producer's first job and exit at once, leaving every site waiting (3 of 6 tries).
    for (const round of [1, 2, 3]) {
      const name = `idle-${round}`;
      const out = join(dir, name);
      const w = worker(name, out, 'i', ['--exit-when-idle']);
      const producer = produce(name);
      expect(await closed.get(w), stderrOf.get(w)).toBe(0);
      const { code, stderr } = await producer;
      expect(code, stderr).toBe(0);
      expect(
        committed(join(out, 'i'), 'sites')
          .map((r) => r.site)
          .sort(),
      ).toEqual(farm.sites.map((s) => s.homepage).sort());
    }
  });

  it('the same list enqueued twice (a second producer once sites have finished): one run, every site walked once, both producers tell all 50', {
    timeout: 180_000,
  }, async () => {
    const out = join(dir, 'twice');
    const workers = ['t1', 't2'].map((id) => worker('twice', out, id));
    const first = produce('twice');
    await stderrLine(workers[0], /usp: http:\/\/\S+: \w+/);
    const second = produce('twice');
    const [a, b] = await Promise.all([first, second]);
    for (const r of [a, b]) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/usp batch: 50 sites \(/);
    }
    expect(b.stderr).toMatch(/\d+ finished earlier in this run \(not walked again/);
    for (const w of workers) expect(await stop(w)).toBe(0);
    // Plain reading, no rule needed: each site in one sites.ndjson, each page once.
    const plain = allWorkers(out, 'sites').map((r) => r.site);
    expect(plain.sort()).toEqual(farm.sites.map((s) => s.homepage).sort());
    const pages = keys(allWorkers(out, 'pages'));
    expect(new Set(pages).size).toBe(pages.length);
  });

  it('Redis without persistence restarted mid-run: the producer lists the lost sites and exits 1 instead of waiting for ever; nothing twice', {
    timeout: 180_000,
  }, async () => {
    const volatile = await startTestRedis();
    try {
      const out = join(dir, 'volatile');
      const workers = ['v1', 'v2'].map((id) => worker('volatile', out, id, [], {}, volatile.url));
      const producer = produce('volatile', volatile.url);
      await stderrLine(workers[0], /usp: http:\/\/\S+: \w+/);
      await volatile.restart();
      const { code, stderr } = await producer;
      expect(code, stderr).toBe(1);
      const lost = [...stderr.matchAll(/^ {2}(http\S+)$/gm)].map((m) => m[1]);
      expect(stderr).toMatch(new RegExp(`usp batch: ${lost.length} sites lost with Redis's data`));
      expect(lost.length).toBeGreaterThan(0);
      for (const w of workers) expect(await stop(w)).toBe(0);
      const view = readerView(out);
      expect(view.twice).toEqual([]);
      // Each site is walked (in the files) or listed as lost: none missing without a word.
      const written = new Set(view.sites.map((r) => r.site));
      for (const s of farm.sites)
        expect(written.has(s.homepage) || lost.includes(s.homepage), s.homepage).toBe(true);
    } finally {
      await volatile.stop();
    }
  });

  it('takes the Redis password from the environment (REDISCLI_AUTH, USP_REDIS_URL), never from the command line', {
    timeout: 120_000,
  }, async () => {
    const locked = await startTestRedis({ password: 'pw secret' });
    try {
      const enqueue = (env: Record<string, string>) =>
        runCli(['batch', '--queue', locked.url, '--queue-name', 'auth', '--no-wait', sitesFile], { env });
      const refused = await enqueue({});
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/NOAUTH|Authentication required/);
      const queued = await enqueue({ REDISCLI_AUTH: 'pw secret' });
      expect(queued.code, queued.stderr).toBe(0);
      expect(queued.stderr).toContain('50 added');
      // The worker: no --queue at all, the URL and the password from the environment.
      const out = join(dir, 'auth');
      const w = spawnCli(
        ['worker', '--queue-name', 'auth', '--out', out, '--worker-id', 'a', '--exit-when-idle', ...FAST],
        { USP_REDIS_URL: locked.url, REDISCLI_AUTH: 'pw secret' },
      );
      children.push(w);
      let stderr = '';
      w.stderr?.on('data', (d: Buffer) => {
        stderr += d.toString('utf8');
      });
      const [code] = await once(w, 'close');
      expect(code, stderr).toBe(0);
      expect(w.spawnargs.join(' ')).not.toContain('secret');
      expect(committed(join(out, 'a'), 'sites')).toHaveLength(50);
    } finally {
      await locked.stop();
    }
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

  it('a Redis that is not there at start: exit 1 and one line, not waiting for ever (the queue, and a --state of its own)', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    await new Promise<void>((resolve) => holder.close(() => resolve()));
    const nobody = `redis://127.0.0.1:${port}`;
    const out = join(dir, 'unreachable');
    for (const [args, shown] of [
      [['--queue', nobody], nobody],
      [['--queue', redis.url, '--state', `${nobody}/1`], `${nobody}/1`],
    ] as const) {
      const r = await runCli(['worker', ...args, '--out', out, '--worker-id', 'w']);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr.startsWith(`usp: error: cannot reach Redis at ${shown}: `)).toBe(true);
      expect(r.stderr).toMatch(/ECONNREFUSED/);
      // Nothing was started: no output directory.
      expect(existsSync(join(out, 'w'))).toBe(false);
    }
  });
  it.skipIf(!TUNES_JIT_OF_THIS_V8)(
    "tunes V8 like usp batch: far fewer functions optimised than with V8's default budget (skipped on V8 12+, Node 22 and 24: V8 12 has no --interrupt-budget, and the CLI leaves a JIT it has not measured alone)",
    {
      timeout: 120_000,
    },
    async () => {
      // V8's trace (stdout) of one worker walking the farm's sites, enqueued on a queue of its own
      // per run; given the default budget on the command line, the worker leaves V8 as it is.
      async function optimised(name: string, nodeFlags: string[]): Promise<number> {
        expect(
          (await runCli(['batch', '--queue', redis.url, '--queue-name', name, '--no-wait', sitesFile])).code,
        ).toBe(0);
        const run = await runNode(
          [
            '--trace-opt',
            ...nodeFlags,
            CLI,
            'worker',
            '--queue',
            redis.url,
            '--queue-name',
            name,
            '--out',
            join(dir, name),
            '--exit-when-idle',
            '--no-progress',
            ...FAST,
          ],
          { guardMs: 100_000, env: cliEnv() },
        );
        expect(run.code).toBe(0);
        return run.stdout.split('\n').filter((l) => l.startsWith('[completed optimizing')).length;
      }
      const tuned = await optimised('jit-tuned', []);
      const byDefault = await optimised('jit-default', [`--interrupt-budget=${V8_DEFAULT_INTERRUPT_BUDGET}`]);
      expect(byDefault).toBeGreaterThan(0);
      expect(tuned).toBeLessThan(byDefault * 0.75);
    },
  );

  it.skipIf(!TUNES_JIT_OF_THIS_V8)(
    'the producer (usp batch --queue) is tuned like usp batch too (skipped on V8 12+, Node 22 and 24: V8 12 has no --interrupt-budget, and the CLI leaves a JIT it has not measured alone)',
    { timeout: 120_000 },
    async () => {
      // Adding a job is the producer's per-site path: V8's trace (stdout) of enqueueing 4,000 sites
      // (--no-wait: no worker needed), each run on a queue of its own.
      const list = join(dir, 'many-sites.txt');
      writeFileSync(list, Array.from({ length: 4000 }, (_, i) => `https://s${i}.example/\n`).join(''));
      async function optimised(name: string, nodeFlags: string[]): Promise<number> {
        const run = await runNode(
          [
            '--trace-opt',
            ...nodeFlags,
            CLI,
            'batch',
            '--queue',
            redis.url,
            '--queue-name',
            name,
            '--no-wait',
            list,
          ],
          { guardMs: 100_000, env: cliEnv() },
        );
        expect(run.code).toBe(0);
        expect(run.stderr).toContain('4000 added');
        return run.stdout.split('\n').filter((l) => l.startsWith('[completed optimizing')).length;
      }
      const tuned = await optimised('producer-jit-tuned', []);
      const byDefault = await optimised('producer-jit-default', [
        `--interrupt-budget=${V8_DEFAULT_INTERRUPT_BUDGET}`,
      ]);
      expect(byDefault).toBeGreaterThan(0);
      expect(tuned).toBeLessThan(byDefault * 0.75);
    },
  );
});
