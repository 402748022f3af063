import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StateStore } from '@usp-ts/batch';
import {
  batchWalk,
  memorySink,
  memoryStateStore,
  type NdjsonSink,
  openNdjsonSink,
  readJournal,
  type SiteResult,
  type SiteSink,
} from '@usp-ts/batch';
import { createRegistry } from '@usp-ts/core';
import { createWebClient } from '@usp-ts/fetcher';
import { robotsTxt } from '@usp-ts/format-robots';
import { xmlSitemap } from '@usp-ts/format-xml-sitemap';
import { startTestRedis, type TestRedis } from '@usp-ts/test-redis';
import { OpenedResources } from '@usp-ts/test-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { voidedCopies } from '../src/copy-claims.js';
import { enqueueSites } from '../src/producer.js';
import { redisStateStore } from '../src/redis-state-store.js';
import { runWorker } from '../src/run-worker.js';

const opened = new OpenedResources();
let redis: TestRedis;
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await redis.stop();
});
afterEach(() => opened.closeAll());

/** Requests in flight per host across every server of the test, and the most ever seen. */
class HostMeter {
  readonly inFlight = new Map<string, number>();
  readonly peak = new Map<string, number>();
  bytes = 0;
  enter(host: string): void {
    const n = (this.inFlight.get(host) ?? 0) + 1;
    this.inFlight.set(host, n);
    this.peak.set(host, Math.max(n, this.peak.get(host) ?? 0));
  }
  leave(host: string): void {
    this.inFlight.set(host, (this.inFlight.get(host) ?? 1) - 1);
  }
}

const urlset = (urls: string[]) =>
  `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.map((u) => `<url><loc>${u}</loc></url>`).join('')}</urlset>`;

/** A server answering from a path → body table, with ETags, a little latency, and the meter. */
async function serve(host: string, docs: Map<string, string>, meter: HostMeter): Promise<string> {
  const route = async (req: IncomingMessage, res: ServerResponse) => {
    meter.enter(host);
    try {
      // Latency makes requests overlap, so a missing gate would show in the meter.
      await new Promise((r) => setTimeout(r, 10));
      const body = docs.get((req.url ?? '/').split('?')[0]);
      if (body === undefined) {
        res.writeHead(404);
        res.end();
        return;
      }
      const etag = `"${createHash('sha1').update(body).digest('hex').slice(0, 12)}"`;
      if (req.headers['if-none-match'] === etag) {
        res.writeHead(304, { etag });
        res.end();
        return;
      }
      meter.bytes += body.length;
      res.writeHead(200, { 'content-type': 'application/xml', etag });
      res.end(body);
    } finally {
      meter.leave(host);
    }
  };
  const server = await opened.server({ '*': route }, { host });
  return `${server.origin}/`;
}

/**
 * `n` sites on their own 127.0.9.x hosts; each lists one sitemap on its own host and one on a
 * shared "CDN" host, so walks of different sites (in different workers) meet at that host.
 */
async function sites(n: number, meter: HostMeter): Promise<{ homes: string[]; pages: Set<string> }> {
  const cdnDocs = new Map<string, string>();
  const cdn = await serve('127.0.9.200', cdnDocs, meter);
  const homes: string[] = [];
  const pages = new Set<string>();
  for (let i = 1; i <= n; i++) {
    const docs = new Map<string, string>();
    const home = await serve(`127.0.9.${i}`, docs, meter);
    const own = Array.from({ length: 5 + i }, (_, k) => `${home}p${k}`);
    const onCdn = Array.from({ length: 3 }, (_, k) => `${home}c${k}`);
    docs.set('/robots.txt', `User-agent: *\nSitemap: ${home}sitemap.xml\nSitemap: ${cdn}s${i}.xml\n`);
    docs.set('/sitemap.xml', urlset(own));
    cdnDocs.set(`/s${i}.xml`, urlset(onCdn));
    homes.push(home);
    for (const u of [...own, ...onCdn]) pages.add(u);
  }
  return { homes, pages };
}

const registry = () => createRegistry([robotsTxt(), xmlSitemap()]);

/**
 * The README's reader rule, over several workers' (or runs') directories read together: a site's
 * lines in a directory are those between the previous journal line's offsets and its own; skip
 * them when the line's `token` is in the `voids` of any journal line.
 */
function readByRule(dirs: string[]): { sites: string[]; pages: string[] } {
  const journals = dirs.map((dir) => readJournal(join(dir, 'journal.ndjson'))!);
  const voided = new Set(journals.flatMap((j) => j.entries.flatMap((e) => e.voids ?? [])));
  const sites: string[] = [];
  const pages: string[] = [];
  dirs.forEach((dir, d) => {
    const files = {
      sites: readFileSync(join(dir, 'sites.ndjson')),
      pages: readFileSync(join(dir, 'pages.ndjson')),
    };
    let from: Record<string, number> = {};
    for (const entry of journals[d].entries) {
      const to = entry.offsets;
      if (entry.token === undefined || !voided.has(entry.token)) {
        const lines = (name: 'sites' | 'pages') =>
          files[name]
            .subarray(from[name] ?? 0, to[name])
            .toString('utf8')
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l));
        sites.push(...lines('sites').map((r) => r.site));
        pages.push(...lines('pages').map((r) => r.url));
      }
      from = to;
    }
  });
  return { sites, pages };
}
const client = () => opened.track(createWebClient({ allowPrivateNetworks: true, retries: 1 }));

/**
 * A memory state store whose save of `site` throws (`times` times): the try has kept its rows by
 * then, so it fails with a copy in the files.
 */
function failingSaveOf(site: string, times = 1): StateStore {
  const state = memoryStateStore();
  const saveSite = state.saveSite.bind(state);
  let left = times;
  (state as { saveSite: typeof saveSite }).saveSite = async (s, mark) => {
    if (left > 0 && s.site === site) {
      left--;
      throw new Error('state store unreachable');
    }
    return saveSite(s, mark);
  };
  return state;
}

/** The lines of an NDJSON file in `dir`, parsed (rows and journal lines of several shapes). */
function readNdjson(dir: string, file: string): ReturnType<typeof JSON.parse>[] {
  return readFileSync(join(dir, file), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
}

/**
 * Three sites walked by one worker into NDJSON files in `dir`, where the state of `homes[failAt]`
 * fails to save once after its rows were kept: that try fails and the site is walked again (two
 * tries a job). Returns with the worker stopped and the sink still open.
 */
async function walkWithOneFailedSave(
  dir: string,
  queueName: string,
  failAt: number,
  workerOptions: { sites?: number } = {},
): Promise<{ sink: NdjsonSink; homes: string[]; pages: Set<string> }> {
  const { homes, pages } = await sites(3, new HostMeter());
  const sink = await openNdjsonSink({
    dir,
    voidedCopies: (tokens) => voidedCopies(tokens, { connection: redis.url, queueName }),
  });
  const worker = runWorker({
    connection: redis.url,
    queueName,
    webClient: client(),
    registry: registry(),
    sink,
    state: failingSaveOf(homes[failAt]),
    ...workerOptions,
    name: 'w',
  });
  const done = await enqueueSites(homes, {
    connection: redis.url,
    queueName,
    wait: true,
    attempts: 2,
    backoffMs: 0,
  });
  await worker.stop();
  expect(done).toMatchObject({ finished: 3, failed: [] });
  return { sink, homes, pages };
}

/** The closed sink's files in `dir` hold every site once and every page once, read plainly. */
function expectEachOnce(dir: string, homes: readonly string[], pages: ReadonlySet<string>): void {
  expect(
    readNdjson(dir, 'sites.ndjson')
      .map((r) => r.site)
      .sort(),
  ).toEqual([...homes].sort());
  const urls = readNdjson(dir, 'pages.ndjson').map((p) => p.url);
  expect(urls.length).toBe(pages.size);
  expect(new Set(urls)).toEqual(pages);
}

describe('runWorker', () => {
  it('checks the run options as batchWalk does, before connecting, and walks with a registry loader', async () => {
    const base = { connection: redis.url, webClient: client(), registry: registry(), sink: memorySink('x') };
    expect(() => runWorker({ ...base, siteDeadlineMs: -1 })).toThrow(
      'Option siteDeadlineMs: must be a number of ms > 0',
    );
    expect(() => runWorker({ ...base, probeTimeotMs: 5 } as never)).toThrow(
      'Option probeTimeotMs: unknown option (did you mean probeTimeoutMs?)',
    );
    const { homes, pages } = await sites(2, new HostMeter());
    const sink = memorySink('w');
    let loads = 0;
    const worker = runWorker({
      ...base,
      queueName: 'loader',
      sink,
      registry: async () => {
        loads++;
        return registry();
      },
      name: 'w',
    });
    const done = await enqueueSites(homes, { connection: redis.url, queueName: 'loader', wait: true });
    await worker.stop();
    expect(done).toMatchObject({ finished: 2, failed: [] });
    expect(loads).toBeGreaterThan(0);
    expect(new Set(sink.rows.pages.map((p) => p.url))).toEqual(pages);
  });

  it('walks the sites with the batch job on several workers: the local batch pages, exactly once, per-host limit held across workers', async () => {
    const meter = new HostMeter();
    const { homes, pages } = await sites(12, meter);
    const queueName = 'same-as-local';
    const sinks = [memorySink('w1'), memorySink('w2')];
    const workers = sinks.map((sink, i) =>
      runWorker({
        connection: redis.url,
        queueName,
        webClient: client(),
        registry: registry(),
        sink,
        sites: 4,
        perHost: 1,
        name: `w${i + 1}`,
      }),
    );
    const results: SiteResult[] = [];
    const done = await enqueueSites<SiteResult>(homes, {
      connection: redis.url,
      queueName,
      wait: true,
      onResult: (o) => {
        if (o.ok) results.push(o.result);
      },
    });
    await Promise.all(workers.map((w) => w.stop()));
    expect(done).toMatchObject({ sites: 12, finished: 12, failed: [] });
    expect(results.map((r) => r.status)).toEqual(Array(12).fill('ok'));

    const queued = sinks.flatMap((s) => s.rows.pages.map((p) => p.url));
    expect(queued.length).toBe(pages.size);
    expect(new Set(queued)).toEqual(pages);
    expect(sinks.flatMap((s) => s.rows.sites.map((r) => r.site)).sort()).toEqual([...homes].sort());
    // Both workers took sites, and the shared host never saw two requests at once.
    expect(sinks.every((s) => s.rows.sites.length > 0)).toBe(true);
    expect(Math.max(...meter.peak.values())).toBe(1);

    // The same sites walked by the local batch give the same pages.
    const local = memorySink('local');
    for await (const _ of batchWalk(homes, {
      webClient: client(),
      registry: registry(),
      sink: local,
      perHost: 1,
    })) {
      // results go to the sink
    }
    expect(new Set(local.rows.pages.map((p) => p.url))).toEqual(new Set(queued));
  });

  it('a try that kept its rows and then failed (its state not saved) is walked again: the new copy voids it, and the worker cuts it from its files at close', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'usp-void-'));
    try {
      // The rows of homes[0] are in the files when its state fails to save: the try fails.
      const { sink, homes, pages } = await walkWithOneFailedSave(dir, 'void-on-retry', 0);
      // Before close: the first copy is still there, and the second names it.
      const entries = readNdjson(dir, 'journal.ndjson').filter(
        (l) => l.type === 'site' && l.site === homes[0],
      );
      expect(entries).toHaveLength(2);
      expect(entries[1].voids).toEqual([entries[0].token]);
      await sink.close();
      expectEachOnce(dir, homes, pages);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('one worker slot walks site after site under one BullMQ lock token: a retried site voids its own earlier copy only, never the copies of the other sites of that slot', async () => {
    const queueName = 'void-one-slot';
    const dir = mkdtempSync(join(tmpdir(), 'usp-void-slot-'));
    try {
      // One site at a time: BullMQ hands the slot's next job the token of the one it just completed.
      // homes[0] completes, then homes[1] keeps its rows and fails on its state, and is walked again.
      const { sink, homes, pages } = await walkWithOneFailedSave(dir, queueName, 1, { sites: 1 });
      const entries = readNdjson(dir, 'journal.ndjson').filter((l) => l.type === 'site');
      expect(entries.map((e) => e.site).sort()).toEqual([homes[0], homes[1], homes[1], homes[2]].sort());
      // Each copy has a name of its own, and the second copy of homes[1] voids the first one only.
      expect(new Set(entries.map((e) => e.token)).size).toBe(4);
      const [first, second] = entries.filter((e) => e.site === homes[1]);
      expect(second.voids).toEqual([first.token]);
      const tokens = entries.map((e) => e.token);
      expect([...(await voidedCopies(tokens, { connection: redis.url, queueName }))]).toEqual([first.token]);
      await sink.close();
      expectEachOnce(dir, homes, pages);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a site whose last try kept its rows and failed: listed as failed, its copy void; read with the next run by the reader rule, every site once', async () => {
    const meter = new HostMeter();
    const { homes, pages } = await sites(3, meter);
    const queueName = 'void-failed';
    const dirs = [mkdtempSync(join(tmpdir(), 'usp-failed-1-')), mkdtempSync(join(tmpdir(), 'usp-failed-2-'))];
    try {
      // Run 1: the rows of homes[0] are in the files when its state fails to save, and it has no
      // try left. Its worker is then lost (its files never opened again, nothing cut from them).
      const lost = await openNdjsonSink({ dir: dirs[0] });
      const state = failingSaveOf(homes[0], Number.POSITIVE_INFINITY);
      const first = runWorker({
        connection: redis.url,
        queueName,
        webClient: client(),
        registry: registry(),
        sink: lost,
        state,
        name: 'w1',
      });
      const done = await enqueueSites(homes, { connection: redis.url, queueName, wait: true, attempts: 1 });
      await first.stop();
      await lost.close(); // without `voidedCopies`: nothing is cut, as if it had been killed
      expect(done.failed.map((f) => f.site)).toEqual([homes[0]]);
      const kept = readJournal(join(dirs[0], 'journal.ndjson'))!.entries.find((e) => e.site === homes[0])!;
      expect(kept.token).toBeDefined();
      expect(await voidedCopies([kept.token!], { connection: redis.url, queueName })).toEqual(
        new Set([kept.token]),
      );

      // Run 2, the failed site again, on another worker into another directory.
      const sink = await openNdjsonSink({ dir: dirs[1] });
      const second = runWorker({
        connection: redis.url,
        queueName,
        webClient: client(),
        registry: registry(),
        sink,
        name: 'w2',
      });
      const again = await enqueueSites([homes[0]], { connection: redis.url, queueName, wait: true });
      await second.stop();
      await sink.close();
      expect(again).toMatchObject({ requeued: 1, finished: 1, failed: [] });
      const { sites: read, pages: urls } = readByRule(dirs);
      expect(read.sort()).toEqual([...homes].sort());
      expect(urls.length).toBe(pages.size);
      expect(new Set(urls)).toEqual(pages);
    } finally {
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  });

  it("hands the sink each page's line as the job serialised it (with a state), as usp batch does", async () => {
    const meter = new HostMeter();
    const { homes, pages } = await sites(2, meter);
    const inner = memorySink('lines');
    const lines: (string | undefined)[] = [];
    const sink: SiteSink = {
      begin(site) {
        const output = inner.begin(site);
        return {
          page(row, json) {
            lines.push(json === JSON.stringify(row) ? 'same' : json);
            output.page(row, json);
          },
          sitemap: (row) => output.sitemap(row),
          commit: (result, options) => output.commit(result, options),
          discard: () => output.discard(),
        };
      },
    };
    const worker = runWorker({
      connection: redis.url,
      queueName: 'lines',
      webClient: client(),
      registry: registry(),
      sink,
      state: memoryStateStore(),
    });
    const result = await enqueueSites(homes, { connection: redis.url, queueName: 'lines', wait: true });
    await worker.stop();
    expect(result.finished).toBe(2);
    // Every page came with its line: the NDJSON sink writes it instead of serialising the row again.
    expect(lines.length).toBe(pages.size);
    expect(new Set(lines)).toEqual(new Set(['same']));
  });

  it('a site whose walk fails in an unexpected way (a bug in a client or a sink) is an error row with the message, or keeps what it wrote; the worker goes on with the others', async () => {
    const meter = new HostMeter();
    const { homes } = await sites(3, meter);
    const bad = new URL(homes[0]).hostname;
    const base = client();
    // A client whose idle-socket cleanup throws for one site's host: walkSite rejects after its walk.
    const buggy = new Proxy(base, {
      get(target, key) {
        if (key === 'closeIdle') {
          return (hosts: Iterable<string>) => {
            if ([...hosts].includes(bad)) throw new TypeError('closeIdle exploded');
            return (target as unknown as { closeIdle(h: Iterable<string>): void }).closeIdle(hosts);
          };
        }
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const inner = memorySink('internal');
    // And a sink whose first begin for another site throws: that site's walk never starts.
    let thrown = false;
    const sink: SiteSink = {
      begin(site) {
        if (site === homes[1] && !thrown) {
          thrown = true;
          throw new TypeError('begin exploded');
        }
        return inner.begin(site);
      },
    };
    const worker = runWorker({
      connection: redis.url,
      queueName: 'internal',
      webClient: buggy,
      registry: registry(),
      sink,
    });
    const result = await enqueueSites(homes, {
      connection: redis.url,
      queueName: 'internal',
      wait: true,
      attempts: 1,
    });
    await worker.stop();
    expect(result).toMatchObject({ finished: 3, failed: [] });
    // Each site once: the one whose cleanup threw keeps the rows it had written, the one whose
    // walk never started is an error row with the message, the third is walked as usual.
    expect(inner.rows.sites.map((r) => r.site).sort()).toEqual([...homes].sort());
    expect(inner.rows.sites.find((r) => r.site === homes[0])?.status).toBe('ok');
    expect(inner.rows.sites.find((r) => r.site === homes[1])).toMatchObject({
      status: 'error',
      reason: 'internal error: begin exploded',
    });
    expect(inner.rows.sites.find((r) => r.site === homes[2])?.status).toBe('ok');
  });

  it('shares the incremental state: a second run over unchanged sites transfers no body and emits no page', async () => {
    const meter = new HostMeter();
    const { homes, pages } = await sites(6, meter);
    const queueName = 'incremental';
    const run = async (name: string) => {
      const sink = memorySink(name);
      const state = redisStateStore({ connection: redis.url, prefix: 'inc:' });
      // Each run on another worker: only Redis carries the state from one to the next.
      const worker = runWorker({
        connection: redis.url,
        queueName,
        webClient: client(),
        registry: registry(),
        sink,
        state,
        name,
      });
      const result = await enqueueSites(homes, {
        connection: redis.url,
        queueName,
        wait: true,
        newRun: true,
      });
      await worker.stop();
      await state.close();
      return { sink, result };
    };
    const first = await run('day-1');
    expect(first.result.finished).toBe(6);
    expect(new Set(first.sink.rows.pages.map((p) => p.url))).toEqual(pages);
    expect(first.sink.rows.pages.every((p) => p.change === 'new')).toBe(true);
    const firstBytes = meter.bytes;

    const second = await run('day-2');
    expect(second.result.finished).toBe(6);
    expect(second.sink.rows.pages).toEqual([]);
    expect(meter.bytes).toBe(firstBytes);
    expect(second.sink.rows.sites.reduce((n, r) => n + r.notModified, 0)).toBeGreaterThanOrEqual(18);
  });
});
