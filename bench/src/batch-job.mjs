// The batch job's own CPU in a no-change run, without HTTP: the no-change run of bench:batch
// spends most of its batch thread in the HTTP client and shares two cores with the site farm, so
// its wall and CPU move with the machine's load. This runs `batchWalk` (job, walk, state, sink)
// over the farm's sites with a copy of the state a fresh `usp batch` run left, through a client
// that answers every conditional request 304 and every other one 404 at once, in a process of
// its own per round: CPU of the pass (process.cpuUsage, start-up not counted). With
// `--compare DIR` (a built checkout) the rounds alternate with that checkout's job on the same
// state copies: medians and paired ratios. For instruction counts run one child under callgrind:
//   valgrind --tool=callgrind --separate-threads=yes node src/batch-job.mjs --child ROOT STATE SITES-FILE N
// (thread 1's total, minus the same with N = 0, is the job's instructions for N sites).
// Usage: node src/batch-job.mjs [--sites N] [--big N] [--rounds N] [--compare DIR]
// The fresh run's job has a child of its own (`--fresh-child`, below).
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The farm's sites (seed 17, 3 big ones) as Buffers by host and path, and its first `count` sites.
 * Every site is given port 80 in its documents (the farm's listeners take any free port), so that
 * two runs walk the same URLs and their outputs and digests can be compared.
 */
async function farmDocuments(headerLookup, count) {
  const { startSiteFarm } = await import('@usp-ts/test-server');
  const farm = await startSiteFarm({ sites: 1000, seed: 17, bigSites: 3 });
  await farm.close();
  const hosts = new Map();
  const homes = [];
  for (const site of farm.sites) {
    const home = site.kind === 'refuse' ? site.homepage : `http://${site.host}:80/`;
    homes.push(home);
    const docs = new Map();
    for (const [path, doc] of site.docs) {
      const type = path.endsWith('.txt')
        ? 'text/plain'
        : path.endsWith('.gz')
          ? 'application/gzip'
          : 'application/xml';
      const body = doc.body.replaceAll(site.homepage, home);
      docs.set(path, {
        bytes: doc.gzip ? gzipSync(body) : Buffer.from(body),
        headers: headerLookup({
          'content-type': type,
          etag: `"${createHash('sha1').update(body).digest('hex').slice(0, 16)}"`,
        }),
      });
    }
    hosts.set(site.host, { kind: site.kind, docs });
  }
  return { hosts, lines: homes.slice(0, count) };
}

/** An error answer of the in-memory clients. */
function failed(url, status, code, message) {
  return { kind: 'error', url, status, message, code, retryable: false };
}

/**
 * One child's job: `batchWalk` over `lines` (16 sites at once, 2 a host) with `client`, the NDJSON
 * sink and the SQLite state at `state` (a copy, or a new file), then its figures on stdout: CPU of
 * the pass (start-up not counted), wall, sites and the result rows' `count` summed. Under
 * `valgrind --tool=callgrind --instr-atstart=no`, USP_CALLGRIND=1 counts the pass only.
 */
async function runJob(pkgs, { work, state, lines, client, count, walkOptions }) {
  const { batchWalk, openNdjsonSink, sqliteStateStore, createDefaultRegistry } = pkgs;
  const callgrind = (on) =>
    process.env.USP_CALLGRIND === '1' &&
    spawnSync('callgrind_control', ['-i', on ? 'on' : 'off', String(process.pid)], { stdio: 'ignore' });
  callgrind(true);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const store = sqliteStateStore(state);
  const sink = await openNdjsonSink({ dir: join(work, 'out'), resume: false, state: store });
  let sites = 0;
  let counted = 0;
  for await (const r of batchWalk(lines, {
    webClient: client,
    registry: createDefaultRegistry(),
    sink,
    state: store,
    sites: 16,
    perHost: 2,
    probeTimeoutMs: 1,
    ...(walkOptions !== undefined ? { walkOptions } : {}),
  })) {
    sites++;
    counted += r[count];
  }
  await sink.close();
  await store.close();
  const c = process.cpuUsage(c0);
  callgrind(false);
  const maxRssKiB = process.resourceUsage().maxRSS;
  if (process.env.USP_FRESH_KEEP !== undefined) console.error(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
  const cpuMs = (c.user + c.system) / 1000;
  process.stdout.write(
    `${JSON.stringify({ cpuMs, wallMs: performance.now() - t0, sites, [count]: counted, maxRssKiB })}\n`,
  );
  process.exit(0);
}

/** The packages a child runs, from the built checkout at `root`. */
async function packagesOf(root) {
  const imp = (p) => import(pathToFileURL(join(root, p)).href);
  return {
    ...(await imp('packages/batch/dist/index.js')),
    ...(await imp('packages/state-sqlite/dist/index.js')),
    ...(await imp('packages/usp/dist/index.js')),
    headerLookup: (await imp('packages/core/dist/index.js')).headerLookup,
  };
}

// A fresh pass (`--fresh-child`): the same job from an empty state over the farm's documents,
// served from memory by a client that answers at once (no HTTP, no sockets): the batch's own CPU
// in a fresh run (rows, change tracking, digests, state, output), repeatable enough for callgrind:
//   USP_CALLGRIND=1 valgrind --tool=callgrind --instr-atstart=no node src/batch-job.mjs --fresh-child ROOT N
// (the child builds the farm itself, uncounted). USP_FRESH_KEEP=1 keeps its output and state.
if (process.argv[2] === '--fresh-child') {
  const [root, count] = process.argv.slice(3);
  const pkgs = await packagesOf(root);
  // host → path → { bytes, headers }: what the farm's server would send, as Buffers (the farm's
  // strings are dropped: the job's heap holds only what the job makes).
  const { hosts, lines } = await farmDocuments(pkgs.headerLookup, Number(count));
  const CHUNK = 64 * 1024;
  const client = {
    async get(url, options = {}) {
      await null;
      const u = new URL(url);
      const site = hosts.get(u.hostname);
      if (site === undefined || site.kind === 'refuse')
        return failed(url, null, 'connection', 'connect ECONNREFUSED');
      if (site.kind === 'hang') return failed(url, null, 'timeout', 'timeout');
      const doc = site.kind === 'dead' ? undefined : site.docs.get(u.pathname);
      if (doc === undefined) return failed(url, 404, 'http-status', '404 Not Found');
      if (options.ifNoneMatch !== undefined) return { kind: 'not-modified', url, headers: doc.headers };
      const bytes = doc.bytes;
      return {
        kind: 'ok',
        status: 200,
        statusText: 'OK',
        url,
        headers: doc.headers,
        body: (async function* () {
          for (let at = 0; at < bytes.length; at += CHUNK) yield bytes.subarray(at, at + CHUNK);
        })(),
        cancel() {},
      };
    },
  };
  const work = mkdtempSync(join(tmpdir(), 'usp-batch-fresh-'));
  // As `usp batch` walks (cli/site-walk.ts).
  const walkOptions = { gunzip: pkgs.nodeGunzip };
  await runJob(pkgs, { work, state: join(work, 'state.sqlite'), lines, client, count: 'pages', walkOptions });
}

if (process.argv[2] === '--child') {
  const [root, stateFile, sitesFile, count] = process.argv.slice(3);
  const pkgs = await packagesOf(root);
  const noHeaders = pkgs.headerLookup(undefined);
  const client = {
    async get(url, options = {}) {
      await null;
      if (options.ifNoneMatch !== undefined || options.ifModifiedSince !== undefined) {
        return { kind: 'not-modified', url, headers: noHeaders };
      }
      return failed(url, 404, 'http-status', '404 Not Found');
    },
  };
  const lines = readFileSync(sitesFile, 'utf8').split('\n').slice(0, Number(count));
  const work = mkdtempSync(join(tmpdir(), 'usp-batch-job-'));
  const state = join(work, 'state.sqlite');
  copyFileSync(stateFile, state);
  await runJob(pkgs, { work, state, lines, client, count: 'notModified' });
}

const { values } = parseArgs({
  options: {
    sites: { type: 'string', default: '1000' },
    big: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '5' },
    compare: { type: 'string' },
  },
});
const rounds = Number(values.rounds);
if (values.compare !== undefined && !existsSync(join(values.compare, 'packages/batch/dist/index.js'))) {
  throw new Error(`--compare: no built packages/batch in ${values.compare}`);
}
const { startSiteFarm } = await import('@usp-ts/test-server');
const n = Number(values.sites);
const farm = await startSiteFarm({ sites: n, seed: 17, bigSites: Number(values.big) });
const work = mkdtempSync(join(tmpdir(), 'usp-batch-job-bench-'));
const sitesFile = join(work, 'sites.txt');
writeFileSync(sitesFile, farm.sitesFile());
const stateFile = join(work, 'state.sqlite');
// The state: a fresh run of this checkout's CLI, as bench:batch makes it (not spawnSync: the
// farm answers from this process).
const fresh = await new Promise((resolve) => {
  spawn(
    process.execPath,
    [
      join(ROOT, 'packages/usp/dist/cli.js'),
      'batch',
      '--out',
      join(work, 'fresh'),
      '--state',
      stateFile,
      '--allow-private-networks',
      '--timeout',
      '10s',
      '--retries',
      '2',
      '--site-deadline',
      '60s',
      sitesFile,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  ).on('exit', (status) => resolve({ status }));
});
await farm.close();
if (fresh.status !== 0) throw new Error(`the fresh run failed (${fresh.status})`);

const child = (root) => {
  const r = spawnSync(
    process.execPath,
    [fileURLToPath(import.meta.url), '--child', root, stateFile, sitesFile, String(n)],
    {
      encoding: 'utf8',
    },
  );
  if (r.status !== 0) throw new Error(`child ${root}: ${r.stderr}`);
  return JSON.parse(r.stdout);
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ours = [];
const theirs = [];
for (let i = 0; i < rounds; i++) {
  // Alternated, the compared checkout first in every other round: load drifts both ways.
  if (values.compare !== undefined && i % 2 === 1) theirs.push(child(values.compare));
  ours.push(child(ROOT));
  if (values.compare !== undefined && i % 2 === 0) theirs.push(child(values.compare));
}
rmSync(work, { recursive: true, force: true });
const f = (x) => x.toFixed(0);
console.log(
  `batch job, no-change pass without HTTP, ${n} sites (${ours[0].notModified} 304s), load ${loadavg()[0].toFixed(1)}`,
);
console.log(
  `this checkout: CPU ${ours.map((r) => f(r.cpuMs)).join(', ')} ms, median ${f(median(ours.map((r) => r.cpuMs)))}`,
);
if (theirs.length > 0) {
  const ratios = ours.map((r, i) => r.cpuMs / theirs[i].cpuMs);
  console.log(
    `--compare: CPU ${theirs.map((r) => f(r.cpuMs)).join(', ')} ms, median ${f(median(theirs.map((r) => r.cpuMs)))}; ours ÷ theirs ${ratios.map((x) => x.toFixed(2)).join(', ')}, median ${median(ratios).toFixed(2)}`,
  );
}
