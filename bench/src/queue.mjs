// The distributed case of issue 18: the batch case's site farm (N sites, default 1,000, each on its
// own loopback address 127.78.x.y, 50 ms added to every answer so that the network, not the two
// cores, sets the pace) walked by `usp batch` on one process, then by 1, 2 and 4 `usp worker`
// processes fed by `usp batch --queue` through a Redis of the bench's own. Each process runs under
// GNU time (wall, user + sys CPU, peak RSS); Redis is measured apart (its CPU from /proc, its
// memory from INFO memory). Every worker walks 16 sites at a time, as the local batch does.
//
// The CPU a process spends starting (loading modules, connecting, first compiling its paths) is
// not a cost per site: each setup is also run on a list of one site (or an empty one, --start-up
// empty) right before its real run, and that CPU is taken off before the per-site figures (both
// are shown). The local and queued runs strictly alternate (--rounds queued runs between
// --rounds + 1 local ones); --ir-sites N adds a pair of runs on N sites under callgrind, counted
// in instructions, as a cross-check that the machine's load does not move.
//
// Targets (PASS/FAIL): the queue costs < 5 % of the local batch's CPU per site (one worker +
// producer against the local batch: the same number of walking processes, so the difference is
// the queue's; with more workers each extra process also warms up its own JIT, shown but not the
// target); two workers are >= 1.7x one in wall time. Also checked: the same pages as the local batch, each once; the per-host limit held
// across workers (counted by the farm).
// Usage: node src/queue.mjs [--sites N] [--workers 1,2,4] [--latency-ms 50] [--rounds 5] [--start-up one-site|empty]
//                           [--ir-sites N] [--cli FILE] [--callgrind] [--state]
//                           [--out results/queue.md] [--json FILE]
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { enqueueSites } from '@usp-ts/queue-bullmq';
import { startTestRedis } from '@usp-ts/test-redis';
import { startSiteFarm } from '@usp-ts/test-server';
import { Redis } from 'ioredis';
import { PRODUCT_JIT_FLAGS } from './proc/queue-package.mjs';
import { eachNdjsonRow, spawnTimed as timed } from './timed.mjs';

const { values } = parseArgs({
  options: {
    sites: { type: 'string', default: '1000' },
    workers: { type: 'string', default: '1,2,4' },
    'latency-ms': { type: 'string', default: '50' },
    state: { type: 'boolean', default: false },
    out: { type: 'string', default: fileURLToPath(new URL('../results/queue.md', import.meta.url)) },
    json: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    cli: { type: 'string' },
    callgrind: { type: 'boolean', default: false },
    'start-up': { type: 'string', default: 'one-site' },
    'ir-sites': { type: 'string', default: '0' },
  },
});
// --cli: another checkout's built CLI (e.g. /work/wt/base9/packages/usp/dist/cli.js) for an A/B.
const CLI = values.cli ?? fileURLToPath(new URL('../../packages/usp/dist/cli.js', import.meta.url));
const SITES_PER_PROCESS = '16';
const PER_HOST = 2;
// Short network limits: the farm's hung host costs each run the same few seconds, not minutes.
// Under callgrind (~50x slower) the limits are raised so that no site is cut short by the tool.
const net = (cg) =>
  cg
    ? ['--allow-private-networks', '--timeout', '60s', '--retries', '1', '--site-deadline', '900s']
    : ['--allow-private-networks', '--timeout', '3s', '--retries', '1', '--site-deadline', '30s'];
// What the local batch and every worker are given alike; -v: a line per site on stderr (the
// workers' first one says they are ready).
const walk = (cg) => [
  '--sites',
  SITES_PER_PROCESS,
  '--per-host',
  String(PER_HOST),
  '--no-progress',
  '-v',
  ...net(cg),
];

let cgRuns = 0;
/**
 * A CLI process under GNU time; with --callgrind, under callgrind too, and its "CPU" is then its
 * instructions (all threads) in units of 10^9: the same counts whatever the machine's load.
 */
function cli(args, cg = values.callgrind) {
  if (!cg) return timed(process.execPath, [CLI, ...args]);
  const dir = join(work, `cg-${++cgRuns}`);
  mkdirSync(dir);
  const t = timed('valgrind', [
    '--tool=callgrind',
    '--smc-check=all-non-file',
    `--callgrind-out-file=${dir}/cg.%p`,
    process.execPath,
    CLI,
    ...args,
  ]);
  return {
    child: t.child,
    done: t.done.then((r) => {
      let ir = 0;
      for (const name of readdirSync(dir)) {
        const m = /^(?:summary|totals): (\d+)/m.exec(readFileSync(join(dir, name), 'utf8'));
        if (m !== null) ir += Number(m[1]);
      }
      return { ...r, cpuS: ir / 1e9 };
    }),
  };
}

/** SIGTERM to the process GNU time runs (time itself would die of it and leave the child behind). */
function stopUnderTime(child) {
  const pid = child.pid;
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/);
  for (const c of children) if (c !== '') process.kill(Number(c), 'SIGTERM');
}

/** Resolves once `child` wrote a line matching `re` on stderr (GNU time passes it through). */
function stderrMatch(child, re) {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (d) => {
      text += d;
      if (re.test(text)) {
        child.stderr.off('data', onData);
        resolve();
      }
    };
    child.stderr.on('data', onData);
    child.once('close', () => reject(new Error(`exited before ${re}: ${text}`)));
  });
}

/** Redis's own CPU (user + sys, s) and peak RSS (MiB), from /proc. */
function redisProc(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuS: ticks / 100, peakRssMiB: hwm === null ? null : Number(hwm[1]) / 1024 };
}

const n = Number(values.sites);
const latencyMs = Number(values['latency-ms']);
const workerCounts = values.workers.split(',').map(Number);
const roundCount = Number(values.rounds);
if (!(roundCount >= 1)) throw new Error(`--rounds: expected a number >= 1, got ${values.rounds}`);
const farm = await startSiteFarm({ sites: n, seed: 18, octet: 78, delayMs: latencyMs });
const redis = await startTestRedis();
const admin = new Redis(redis.url);
const work = mkdtempSync(join(tmpdir(), 'usp-queue-bench-'));
const sitesFile = join(work, 'sites.txt');
writeFileSync(sitesFile, farm.sitesFile());
const kinds = {};
for (const s of farm.sites) kinds[s.kind] = (kinds[s.kind] ?? 0) + 1;
// Each process's start-up CPU is measured on a list of one site (the first urlset of the farm) by
// default: that run loads and first compiles every path a real run takes (the walk, BullMQ's job
// scripts, the result's way back), which an empty list does not; a site's own cost is then taken
// off by dividing by the sites left (N - 1). `--start-up empty`: an empty list, as before session 11.
if (values['start-up'] !== 'one-site' && values['start-up'] !== 'empty') {
  throw new Error(`--start-up: expected one-site or empty, got ${values['start-up']}`);
}
const startUpSite = farm.sites.find((s) => s.kind === 'urlset')?.homepage;
const startUpSites = values['start-up'] === 'empty' ? 0 : 1;
const startUpFile = join(work, 'start-up.txt');
writeFileSync(startUpFile, startUpSites === 0 ? '' : `${startUpSite}\n`);
/** Sites a run's per-site figures are over: those beyond its start-up run's. */
const perSiteCount = n - startUpSites;
const irSites = Number(values['ir-sites']);
if (!(Number.isInteger(irSites) && (irSites === 0 || irSites > startUpSites))) {
  throw new Error(`--ir-sites: expected 0 or a number of sites > ${startUpSites}, got ${values['ir-sites']}`);
}
const truth = farm.allPages();
console.log(`${n} sites (${JSON.stringify(kinds)}), ${truth.size} page URLs, ${latencyMs} ms per answer`);

async function redisInfo() {
  const text = await admin.info('memory');
  const field = (name) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(text)?.[1] ?? Number.NaN);
  return { usedMiB: field('used_memory') / 2 ** 20, peakMiB: field('used_memory_peak') / 2 ** 20 };
}

/**
 * The pages of some pages.ndjson files as `sitemap url` keys, read as streams (a file can pass
 * 1 GB, more than one string holds; reading it whole reported 0 rows there).
 */
async function pageKeys(files) {
  const keys = [];
  for (const file of files) await eachNdjsonRow(file, (p) => keys.push(`${p.sitemap} ${p.url}`));
  return keys;
}

/** `usp batch` on one process. */
async function local(list, name, cg = values.callgrind) {
  farm.resetCounters();
  const out = join(work, name);
  const state = values.state ? ['--state', join(work, `${name}.sqlite`)] : [];
  const t = await cli(['batch', '--out', out, ...walk(cg), ...state, list], cg).done;
  if (t.code !== 0) throw new Error(`usp batch exited ${t.code}: ${t.stderr}`);
  return {
    ...t,
    pages: await pageKeys([join(out, 'pages.ndjson')]),
    maxInFlightPerHost: farm.totals().maxInFlightPerHost,
  };
}

/** W workers started first, then the producer; wall = the producer's, CPU = workers + producer. */
async function queued(workers, list, name, cg = values.callgrind) {
  farm.resetCounters();
  await admin.flushall();
  await admin.config('RESETSTAT');
  const redisBefore = redisProc(redis.pid);
  const out = join(work, name);
  const state = values.state ? ['--state', redis.url] : [];
  const procs = [];
  for (let w = 0; w < workers; w++) {
    const p = cli(
      [
        'worker',
        '--queue',
        redis.url,
        '--queue-name',
        name,
        '--out',
        out,
        '--worker-id',
        `w${w + 1}`,
        ...walk(cg),
        ...state,
      ],
      cg,
    );
    procs.push(p);
  }
  // Every worker is connected and waiting before the producer starts the clock.
  await Promise.all(procs.map((p) => stderrMatch(p.child, /usp: worker w\d+ on /)));
  const producer = await cli(['batch', '--queue', redis.url, '--queue-name', name, '--no-progress', list], cg)
    .done;
  for (const p of procs) stopUnderTime(p.child);
  const ws = await Promise.all(procs.map((p) => p.done));
  if (producer.code !== 0) throw new Error(`producer exited ${producer.code}: ${producer.stderr}`);
  for (const w of ws) if (w.code !== 0) throw new Error(`worker exited ${w.code}: ${w.stderr}`);
  const redisAfter = redisProc(redis.pid);
  const mem = await redisInfo();
  const commands = Number(/^total_commands_processed:(\d+)/m.exec(await admin.info('stats'))?.[1]);
  // QUEUE_STATS=1: the run's Redis commands by kind, a site (the scripts' inner commands included).
  if (process.env.QUEUE_STATS) {
    const sites = readFileSync(list, 'utf8').split('\n').filter(Boolean).length;
    console.log(
      `${name}: Redis commands a site by kind\n${(await admin.info('commandstats'))
        .split('\n')
        .map((l) => /^cmdstat_([^:]+):calls=(\d+)/.exec(l))
        .filter((m) => m !== null)
        .sort((a, b) => Number(b[2]) - Number(a[2]))
        .map((m) => `  ${m[1]} ${(Number(m[2]) / sites).toFixed(2)}`)
        .join('\n')}`,
    );
  }
  const pages = await pageKeys(readdirSync(out).map((id) => join(out, id, 'pages.ndjson')));
  return {
    wallS: producer.wallS,
    cpuS: producer.cpuS + ws.reduce((s, w) => s + w.cpuS, 0),
    producerCpuS: producer.cpuS,
    workerCpuS: ws.map((w) => w.cpuS),
    workerPeakRssMiB: ws.map((w) => w.peakRssMiB),
    redisCpuS: redisAfter.cpuS - redisBefore.cpuS,
    redisUsedMiB: mem.usedMiB,
    redisPeakMiB: mem.peakMiB,
    redisCommands: commands,
    pages,
    maxInFlightPerHost: farm.totals().maxInFlightPerHost,
  };
}

/**
 * BullMQ's own cost per job, the floor of the queue's overhead: `n` jobs that do nothing but
 * confirm their lock, through `enqueueSites` here and a `startQueueWorker` process (16 at a time),
 * each side's CPU counted from when it is ready (module loading excluded). With `jobMs`, each job
 * holds its slot that long first, so the jobs end at the pace of the real run's sites: a process
 * that wakes for each job on its own, and waits 36 s instead of 2, spends about twice the CPU per
 * job of one taking them back to back (its timers, polls and cold code); that paced floor is
 * the one to compare with the queue's overhead per site.
 */
async function floor(jobMs = 0) {
  await admin.flushall();
  const worker = fork(
    fileURLToPath(new URL('proc/queue-floor-worker.mjs', import.meta.url)),
    [redis.url, 'floor', String(Math.round(jobMs))],
    // As `usp worker` runs (before session 12: V8's default JIT setting).
    { execArgv: PRODUCT_JIT_FLAGS },
  );
  const [ready] = await once(worker, 'message');
  if (ready !== 'ready') throw new Error(`floor worker: ${ready}`);
  // One job first: the producer's modules and scripts are loaded before the clock starts.
  await enqueueSites(['http://warm.invalid/'], { connection: redis.url, queueName: 'floor', wait: true });
  const sites = Array.from({ length: n }, (_, i) => `http://s${i}.invalid/`);
  const start = process.cpuUsage();
  await enqueueSites(sites, { connection: redis.url, queueName: 'floor', wait: true });
  const used = process.cpuUsage(start);
  worker.send('stop');
  const [workerUs] = await once(worker, 'message');
  return { producerMs: (used.user + used.system) / n / 1000, workerMs: workerUs / n / 1000 };
}

/**
 * The STOCK floor at the run's pace (session 13): BullMQ as it ships (proc/queue-floor-stock.mjs:
 * a Worker with default options but 16 at a time, whose jobs only hold their slot `jobMs`;
 * `addBulk` and a producer waiting with `QueueEvents`), none of our code or settings, less a
 * process running the same timers without BullMQ (run alongside). What the issue's choice, one
 * BullMQ job per site, costs by itself at this pace.
 */
async function stockFloor(jobMs) {
  await admin.flushall();
  const script = fileURLToPath(new URL('proc/queue-floor-stock.mjs', import.meta.url));
  const cpuOf = async (child) => {
    const [us] = await once(child, 'message');
    return us;
  };
  const worker = fork(script, ['worker', redis.url, 'stock', String(Math.round(jobMs))]);
  const [ready] = await once(worker, 'message');
  if (ready !== 'ready') throw new Error(`stock floor worker: ${ready}`);
  const timers = cpuOf(fork(script, ['timers', String(n), String(Math.round(jobMs))]));
  const producerUs = await cpuOf(fork(script, ['producer', redis.url, 'stock', String(n), 'events']));
  worker.send('stop');
  const workerUs = await cpuOf(worker);
  const timersUs = await timers;
  return {
    producerMs: producerUs / n / 1000,
    workerMs: (workerUs - timersUs) / n / 1000,
    timersMs: timersUs / n / 1000,
  };
}

const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const signed = (x, d = 2) => `${x >= 0 ? '+' : ''}${round(x, d)}`;

/** A queued run's per-site figures against a local per-site CPU, each process less its own start-up. */
function perSite(r, idle, localPerSiteMs, sites = perSiteCount) {
  r.perSiteMs = ((r.cpuS - idle.cpuS) / sites) * 1000;
  r.overheadMs = r.perSiteMs - localPerSiteMs;
  r.overheadPct = (r.overheadMs / localPerSiteMs) * 100;
  r.jobsPerS = n / r.wallS;
  r.commandsPerSite = (r.redisCommands - idle.redisCommands) / sites;
  r.producerPerSiteMs = ((r.producerCpuS - idle.producerCpuS) / sites) * 1000;
  r.workersPerSiteMs = ((r.cpuS - r.producerCpuS - (idle.cpuS - idle.producerCpuS)) / sites) * 1000;
  r.redisPerSiteMs = ((r.redisCpuS - idle.redisCpuS) / sites) * 1000;
}

try {
  let expected = null;
  const checkPages = (r) => {
    const keys = r.pages.sort();
    r.samePages = keys.length === expected.length && keys.every((k, i) => k === expected[i]);
    delete r.pages;
  };
  // Strictly alternated runs, local first and last: L0 Q0 L1 Q1 ... Q(k-1) Lk, each right after its
  // own start-up run. Round i compares Qi with the mean of the local runs either side of it, so a
  // machine whose speed drifts steadily weighs alike on both sides (with pairs in alternating
  // order, L Q then Q L, such a drift fell on one side of every pair). The target is the median
  // of the rounds' overheads.
  const locals = [];
  const localRun = async (i) => {
    const idle = await local(startUpFile, `start-local-${i}`);
    const run = await local(sitesFile, `local-${i}`);
    expected ??= run.pages.sort();
    delete run.pages;
    locals.push({ idle, run, perSiteMs: ((run.cpuS - idle.cpuS) / perSiteCount) * 1000 });
  };
  await localRun(0);
  const rounds = [];
  for (let i = 0; i < roundCount; i++) {
    const idle = await queued(1, startUpFile, `start-1-${i}`);
    const queue = await queued(1, sitesFile, `q1-${i}`);
    await localRun(i + 1);
    const [before, after] = [locals[i], locals[i + 1]];
    const rd = {
      idle,
      queue,
      idleLocal: before.idle,
      local: before.run,
      localRuns: [before.perSiteMs, after.perSiteMs],
      localPerSiteMs: (before.perSiteMs + after.perSiteMs) / 2,
    };
    checkPages(queue);
    perSite(queue, idle, rd.localPerSiteMs);
    rounds.push(rd);
    const q = rd.queue;
    console.log(
      `round ${i + 1}: usp batch ${round(rd.localPerSiteMs)} ms/site (${rd.localRuns.map((x) => round(x)).join(' before, ')} after; start-up ${round(rd.idleLocal.cpuS)} s); ` +
        `1 worker + producer ${round(q.perSiteMs)} ms/site (start-up ${round(rd.idle.producerCpuS)} + ${round(rd.idle.workerCpuS[0])} s): ` +
        `producer ${round(q.producerPerSiteMs)} ms, worker ${signed(q.workersPerSiteMs - rd.localPerSiteMs)} ms over the local batch, ` +
        `Redis ${round(q.redisPerSiteMs)} ms; overhead ${signed(q.overheadPct, 1)} %`,
    );
  }
  const overheads = rounds.map((rd) => rd.queue.overheadPct);
  const medianPct = median(overheads);
  // The table shows the round closest to the median (its two runs side by side).
  const mid = rounds.reduce((best, rd) =>
    Math.abs(rd.queue.overheadPct - medianPct) < Math.abs(best.queue.overheadPct - medianPct) ? rd : best,
  );
  const base = mid.local;
  const idleLocal = mid.idleLocal;
  const localPerSiteMs = median(rounds.map((rd) => rd.localPerSiteMs));
  const idle = { 1: mid.idle };
  const runs = { 1: mid.queue };
  for (const w of workerCounts) {
    if (w === 1) continue;
    idle[w] = await queued(w, startUpFile, `start-${w}`);
    const r = await queued(w, sitesFile, `q${w}`);
    checkPages(r);
    perSite(r, idle[w], localPerSiteMs);
    runs[w] = r;
    console.log(
      `${w} worker(s): wall ${r.wallS} s, CPU ${round(r.cpuS)} s (${round(r.perSiteMs)} ms/site, ${signed(r.overheadPct, 1)} % over the rounds' median local), Redis ${round(r.redisCpuS)} s CPU / ${round(r.redisPeakMiB, 1)} MiB peak, same pages ${r.samePages}`,
    );
  }

  // Instructions (callgrind) of one more pair of runs on a smaller list: the same comparison, in
  // counts that repeat whatever the machine's load, as a cross-check of the CPU-time rounds.
  let ir = null;
  if (irSites > 0) {
    const irFile = join(work, 'ir-sites.txt');
    // Not the hung host: under callgrind its raised timeouts would hold both runs for minutes,
    // for next to no instructions.
    const others = farm.sites
      .filter((s) => s.kind !== 'hang' && (startUpSites === 0 || s.homepage !== startUpSite))
      .map((s) => s.homepage);
    const irList = [...(startUpSites === 0 ? [] : [startUpSite]), ...others.slice(0, irSites - startUpSites)];
    writeFileSync(irFile, `${irList.join('\n')}\n`);
    const idleLocal = await local(startUpFile, 'ir-start-local', true);
    const loc = await local(irFile, 'ir-local', true);
    const idle = await queued(1, startUpFile, 'ir-start-1', true);
    const q = await queued(1, irFile, 'ir-q1', true);
    const sites = irSites - startUpSites;
    const localPerSite = ((loc.cpuS - idleLocal.cpuS) / sites) * 1000;
    const keys = loc.pages.sort();
    const qKeys = q.pages.sort();
    delete loc.pages;
    delete q.pages;
    perSite(q, idle, localPerSite, sites);
    q.samePages = keys.length === qKeys.length && keys.every((k, i) => k === qKeys[i]);
    ir = { sites: irSites, idleLocal, local: loc, localPerSite, idle, queue: q };
    console.log(
      `instructions (${irSites} sites): usp batch ${round(localPerSite, 1)} M/site; 1 worker + producer ${round(q.perSiteMs, 1)} M/site: producer ${round(q.producerPerSiteMs, 2)} M, worker ${signed(q.workersPerSiteMs - localPerSite, 2)} M over the local batch; overhead ${signed(q.overheadPct, 1)} %`,
    );
  }

  const bull = await floor();
  console.log(
    `BullMQ floor: producer ${round(bull.producerMs, 3)} ms + worker ${round(bull.workerMs, 3)} ms per job`,
  );
  // The same jobs at the pace of the median round's sites (16 at a time, each as long as a site took).
  const paceMs = (mid.queue.wallS * 1000 * Number(SITES_PER_PROCESS)) / n;
  const paced = await floor(paceMs);
  console.log(
    `BullMQ floor at the run's pace (${round(paceMs, 0)} ms a job): producer ${round(paced.producerMs, 3)} ms + worker ${round(paced.workerMs, 3)} ms per job`,
  );

  const stock = await stockFloor(paceMs);
  console.log(
    `stock BullMQ floor at the run's pace: producer ${round(stock.producerMs, 3)} ms + worker ${round(stock.workerMs, 3)} ms per job (timers alone ${round(stock.timersMs, 3)} ms taken off)`,
  );

  const shown = [1, ...workerCounts.filter((w) => w !== 1)];
  const spread = `${signed(Math.min(...overheads), 1)} to ${signed(Math.max(...overheads), 1)} %`;
  const targets = {};
  targets[
    `queue CPU per site < 5 % over the local batch (one worker + producer, median of ${roundCount} alternated rounds)`
  ] = medianPct < 5;
  if (runs[2]) targets['two workers >= 1.7x one (wall)'] = runs[1].wallS / runs[2].wallS >= 1.7;
  targets['same pages as usp batch, each once'] =
    shown.every((w) => runs[w].samePages) && rounds.every((rd) => rd.queue.samePages);
  targets[`never more than --per-host (${PER_HOST}) in flight to one host`] =
    Math.max(
      ...locals.map((l) => l.run.maxInFlightPerHost),
      ...rounds.map((rd) => rd.queue.maxInFlightPerHost),
      ...shown.map((w) => runs[w].maxInFlightPerHost),
    ) <= PER_HOST;

  const lines = [
    `# Queue benchmark (issue 18)`,
    '',
    `\`node bench/src/queue.mjs --sites ${n} --workers ${values.workers} --latency-ms ${latencyMs} --rounds ${roundCount}${values['start-up'] === 'empty' ? ' --start-up empty' : ''}${irSites > 0 ? ` --ir-sites ${irSites}` : ''}${values.callgrind ? ' --callgrind' : ''}${values.state ? ' --state' : ''}\`, ${new Date().toISOString()}, ` +
      `${n} farm sites (${Object.entries(kinds)
        .map(([k, c]) => `${c} ${k}`)
        .join(
          ', ',
        )}; ${truth.size} page URLs), ${latencyMs} ms per answer, ${SITES_PER_PROCESS} sites at a time per process, ` +
      `--per-host ${PER_HOST}, state ${values.state ? 'SQLite (local) / Redis (queue)' : 'none'}. ` +
      `CPU is user + sys of each process under GNU time (workers + producer for the queue; Redis apart, from /proc); "per site" takes off each process's own start-up CPU, measured right before it on ${startUpSites === 0 ? 'an empty list' : `a list of one site (${startUpSite}), and divides by the ${perSiteCount} other sites`} ` +
      `(usp batch ${round(idleLocal.cpuS)} s; ${shown.map((w) => `${w} worker(s) ${idle[w].workerCpuS.map((c) => round(c)).join(' / ')} s + producer ${round(idle[w].producerCpuS)} s`).join(', ')}).`,
    ...(values.callgrind
      ? [
          '',
          'Under callgrind (`--callgrind`): every "CPU" figure of the processes below counts instructions, all threads, 10^9 for "s" and 10^6 for "ms" (repeatable whatever the load); peak RSS and wall are valgrind\'s; the floor is still CPU time.',
        ]
      : []),
    '',
    `Queue overhead per site with one worker + producer, median of ${roundCount} rounds: **${signed(medianPct, 1)} %** (rounds ${spread}). ` +
      `Runs strictly alternated, local first and last (${roundCount + 1} local runs, ${roundCount} queued); each round compares its queued run with the mean of the local runs before and after it.`,
    '',
    '| round | usp batch per site, run before / after | usp batch CPU per site: their mean (start-up) | 1 worker + producer CPU per site | producer per site (start-up) | worker over usp batch per site (start-up) | Redis CPU per site | Redis commands per site | overhead |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rounds.map((rd, i) => {
      const q = rd.queue;
      return `| ${i + 1} | ${rd.localRuns.map((x) => round(x)).join(' / ')} ms | ${round(rd.localPerSiteMs)} ms (${round(rd.idleLocal.cpuS)} s) | ${round(q.perSiteMs)} ms | ${round(q.producerPerSiteMs)} ms (${round(rd.idle.producerCpuS)} s) | ${signed(q.workersPerSiteMs - rd.localPerSiteMs)} ms (${round(rd.idle.workerCpuS[0])} s) | ${round(q.redisPerSiteMs)} ms | ${round(q.commandsPerSite, 1)} | ${signed(q.overheadMs)} ms (${signed(q.overheadPct, 1)} %) |`;
    }),
    '',
    `The table below shows round ${rounds.indexOf(mid) + 1} (the closest to the median) for the local batch and one worker; the other runs are compared with the rounds' median local CPU per site (${round(localPerSiteMs)} ms).`,
    '',
    '| run | wall | jobs/s | CPU (workers + producer) | CPU per site (producer) | queue overhead per site | peak RSS per worker | Redis CPU | Redis memory (used / peak) | Redis commands per site | same pages | most in flight per host |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    `| usp batch (one process) | ${base.wallS} s | ${round(n / base.wallS, 1)} | ${round(base.cpuS)} s | ${round(mid.localPerSiteMs)} ms | | ${round(base.peakRssMiB, 0)} MiB | | | | (reference) | ${base.maxInFlightPerHost} |`,
    ...shown.map((w) => {
      const r = runs[w];
      return `| ${w} worker${w > 1 ? 's' : ''} + producer | ${r.wallS} s | ${round(r.jobsPerS, 1)} | ${round(r.cpuS)} s (producer ${round(r.producerCpuS)} s) | ${round(r.perSiteMs)} ms (${round(r.producerPerSiteMs)} ms) | ${signed(r.overheadMs)} ms (${signed(r.overheadPct, 1)} %) | ${r.workerPeakRssMiB.map((m) => round(m, 0)).join(' / ')} MiB | ${round(r.redisCpuS)} s | ${round(r.redisUsedMiB, 1)} / ${round(r.redisPeakMiB, 1)} MiB | ${round(r.commandsPerSite, 1)} | ${r.samePages ? 'yes' : 'NO'} | ${r.maxInFlightPerHost} |`;
    }),
    '',
    `BullMQ's own cost per job (the floor of the overhead: ${n} jobs that only confirm their lock, producer and one worker process (with usp worker's JIT setting since session 12), CPU from when each is ready): ` +
      `producer ${round(bull.producerMs, 3)} ms + worker ${round(bull.workerMs, 3)} ms = ${round(bull.producerMs + bull.workerMs, 3)} ms per job, ` +
      `${round(((bull.producerMs + bull.workerMs) / localPerSiteMs) * 100, 1)} % of the local batch's CPU per site. ` +
      `The same jobs at the run's pace (each holding its slot ${round(paceMs, 0)} ms, as long as a site of round ${rounds.indexOf(mid) + 1} took): ` +
      `producer ${round(paced.producerMs, 3)} ms + worker ${round(paced.workerMs, 3)} ms = ${round(paced.producerMs + paced.workerMs, 3)} ms per job, ` +
      `${round(((paced.producerMs + paced.workerMs) / localPerSiteMs) * 100, 1)} %. ` +
      `Stock BullMQ at the same pace (none of our code or settings: a Worker with default options, 16 at a time, jobs that only hold their slot; addBulk and a producer waiting with QueueEvents; less the same timers without BullMQ): ` +
      `producer ${round(stock.producerMs, 3)} ms + worker ${round(stock.workerMs, 3)} ms = ${round(stock.producerMs + stock.workerMs, 3)} ms per job, ` +
      `${round(((stock.producerMs + stock.workerMs) / localPerSiteMs) * 100, 1)} % of the local batch's CPU per site: the target's room is what is left below 5 %.`,
    '',
    ...(ir === null
      ? []
      : [
          `Cross-check in instructions (callgrind, all threads; repeatable whatever the load), one more pair of runs on ${ir.sites} sites, start-up taken off as above: ` +
            `usp batch ${round(ir.localPerSite, 2)} M instructions per site (start-up ${round(ir.idleLocal.cpuS, 2)} G); ` +
            `1 worker + producer ${round(ir.queue.perSiteMs, 2)} M per site (start-up ${round(ir.idle.workerCpuS[0], 2)} + ${round(ir.idle.producerCpuS, 2)} G): ` +
            `producer ${round(ir.queue.producerPerSiteMs, 3)} M, worker ${signed(ir.queue.workersPerSiteMs - ir.localPerSite, 3)} M over the local batch; ` +
            `overhead **${signed(ir.queue.overheadPct, 1)} %**; same pages ${ir.queue.samePages ? 'yes' : 'NO'}. Under callgrind timers fire ~50x less often per instruction, so waiting costs weigh less than in CPU time.`,
          '',
        ]),
    ...(runs[2] ? [`Two workers ÷ one (wall): ${round(runs[1].wallS / runs[2].wallS)}×.`, ''] : []),
    ...(runs[4] ? [`Four workers ÷ one (wall): ${round(runs[1].wallS / runs[4].wallS)}×.`, ''] : []),
    '| target | result |',
    '| --- | --- |',
    ...Object.entries(targets).map(([t, ok]) => `| ${t} | ${ok ? 'PASS' : 'FAIL'} |`),
    '',
  ];
  writeFileSync(values.out, lines.join('\n'));
  console.log(lines.join('\n'));
  console.log(`written to ${values.out}`);
  if (values.json) {
    writeFileSync(
      values.json,
      `${JSON.stringify({ sites: n, latencyMs, kinds, rounds, medianOverheadPct: medianPct, locals, idle, runs, ir, floor: bull, pacedFloor: { jobMs: paceMs, ...paced }, stockPacedFloor: stock, targets }, null, 2)}\n`,
    );
  }
} finally {
  admin.disconnect();
  await redis.stop();
  await farm.close();
  rmSync(work, { recursive: true, force: true });
}
