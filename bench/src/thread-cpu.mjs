// Issue 19: what `usp ls`'s second thread costs in CPU time, thread by thread. Runs `usp ls` (the
// default format, output to /dev/null) with a parse worker and with `--parse-workers 0`, strictly
// alternated, on one of the bench's sites, and prints per round and as medians: wall, CPU of the
// main thread, of the parse worker and of the rest (V8's compiler and GC helpers, libuv's pool),
// and the ratio two-thread ÷ one-thread of total CPU. Then the co-running probe: the same parse of
// one urlset in one thread alone and in two threads at once (proc/corun.mjs), alternated, CPU
// seconds per parse. Instructions (fixed-cost.mjs) show both modes run about the same code per
// URL; this shows what the machine makes of it. Writes nothing; Linux only (/proc).
//
// Last, the same probe for the whole pipeline (`--pair-rounds N`): `usp ls --parse-workers 0` alone
// and two of them at once (two processes, one core's work each), CPU per process: if two threads
// of one `usp ls` cost more than this, the difference is the two-thread pipeline's own.
//
//   node bench/src/thread-cpu.mjs [--site big|scale-4|bbc] [--rounds N] [--corun-rounds N] [--pair-rounds N] [--cli PATH]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureData } from './generate.mjs';
import { startSiteServer } from './server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const benchDir = path.resolve(here, '..');
const { values } = parseArgs({
  options: {
    site: { type: 'string', default: 'big' },
    rounds: { type: 'string', default: '3' },
    'corun-rounds': { type: 'string', default: '3' },
    'pair-rounds': { type: 'string', default: '2' },
    cli: { type: 'string', default: path.resolve(benchDir, '../packages/usp/dist/cli.js') },
  },
});
const rounds = Number(values.rounds);
const corunRounds = Number(values['corun-rounds']);
const pairRounds = Number(values['pair-rounds']);
const preload = path.join(here, 'proc', 'thread-cpu-preload.mjs');

const dataDir = path.join(benchDir, '.data');
const manifest = await ensureData(dataDir, 'full', (m) => console.error(m));
const site = manifest.sites[values.site];
if (site === undefined) throw new Error(`--site: one of ${Object.keys(manifest.sites).join(', ')}`);
const server = await startSiteServer(path.join(dataDir, 'full'), site.routes);
const work = mkdtempSync(path.join(tmpdir(), 'usp-thread-cpu-'));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const f2 = (x) => x.toFixed(2);

/** Runs a command without blocking this process, which serves the site. */
function run(argv, env = process.env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      // `usp ls` prints the whole site: only a short result line is kept.
      if (stdout.length < 1e5) stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr = (stderr + d).slice(-2000);
    });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

async function runLs(workers, round, tag = '') {
  const out = path.join(work, `r${round}-w${workers}${tag}.json`);
  const t0 = performance.now();
  const r = await run(
    [
      '--import',
      preload,
      values.cli,
      'ls',
      `${server.origin}/`,
      '--no-progress',
      '--parse-workers',
      String(workers),
    ],
    { ...process.env, THREAD_CPU_OUT: out },
  );
  const wall = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`usp ls exited ${r.status}: ${String(r.stderr).slice(-300)}`);
  return { wall, ...JSON.parse(readFileSync(out, 'utf8').trim()) };
}

try {
  const rows = { 1: [], 0: [] };
  console.log(
    `usp ls on the ${values.site} site (${site.urls.toLocaleString('en-US')} URLs), CPU seconds by thread:\n`,
  );
  console.log('| round | mode | wall | main | parse worker | rest | total | peak RSS |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (let round = 1; round <= rounds; round++) {
    // Alternated, the order swapped every round: the machine drifts between fast and slow states.
    for (const w of round % 2 ? [1, 0] : [0, 1]) {
      const m = await runLs(w, round);
      rows[w].push(m);
      console.log(
        `| ${round} | ${w ? 'two threads' : 'one thread'} | ${f2(m.wall)} | ${f2(m.main)} | ${f2(m.worker)} | ${f2(m.other)} | ${f2(m.total)} | ${m.rssMiB.toFixed(0)} MiB |`,
      );
    }
  }
  console.log(
    '\nBy thread, medians: user · system CPU seconds, minor page faults, context switches voluntary · involuntary (the workers: the process less the threads alive at exit; helpers: V8 platform threads and libuv pool):\n',
  );
  console.log('| mode | thread | user | sys | minor faults | vol. switches | invol. switches |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const w of [1, 0]) {
    for (const g of ['main', 'worker', 'helpers']) {
      const pick = (k) => median(rows[w].map((m) => m.threads[g][k]));
      if (w === 0 && g === 'worker') continue;
      console.log(
        `| ${w ? 'two threads' : 'one thread'} | ${{ main: 'main', worker: 'parse worker', helpers: 'helpers' }[g]} | ${f2(pick('user'))} | ${f2(pick('sys'))} | ${pick('minflt')} | ${pick('vcsw')} | ${pick('ivcsw')} |`,
      );
    }
  }
  const ratios = rows[1].map((m, i) => m.total / rows[0][i].total);
  const parse = rows[1].map((m, i) => (m.main + m.worker) / rows[0][i].main);
  console.log(
    `\nTwo threads ÷ one thread, medians of ${rounds} paired rounds: total CPU ${f2(median(ratios))} (${f2(Math.min(...ratios))}-${f2(Math.max(...ratios))}); main + worker ÷ the one thread's main ${f2(median(parse))}; wall ${f2(median(rows[1].map((m, i) => m.wall / rows[0][i].wall)))}.`,
  );
  if (corunRounds > 0) {
    const file = path.join(
      dataDir,
      'full',
      Object.values(manifest.sites.big.routes).find((r) => r.file.endsWith('.xml.gz')).file,
    );
    const alone = [];
    const together = [];
    for (let round = 1; round <= corunRounds; round++) {
      for (const n of round % 2 ? [1, 2] : [2, 1]) {
        const r = await run([path.join(here, 'proc', 'corun.mjs'), file, '2', String(n)]);
        if (r.status !== 0) throw new Error(`corun exited ${r.status}: ${r.stderr.slice(-300)}`);
        const per = JSON.parse(r.stdout).map((x) => x.cpuSPerParse);
        (n === 1 ? alone : together).push(per.reduce((a, b) => a + b, 0) / per.length);
      }
    }
    const k = alone.map((a, i) => together[i] / a);
    console.log(
      `\nCo-running probe (one 50,000-URL urlset parsed in-memory, 2 parses a thread): CPU per parse alone ${f2(median(alone))} s, two threads at once ${f2(median(together))} s each; at once ÷ alone ${f2(median(k))} (${f2(Math.min(...k))}-${f2(Math.max(...k))}, ${corunRounds} rounds).`,
    );
  }
  if (pairRounds > 0) {
    const alone = [];
    const together = [];
    for (let round = 1; round <= pairRounds; round++) {
      for (const n of round % 2 ? [1, 2] : [2, 1]) {
        const ms = await Promise.all(Array.from({ length: n }, (_, i) => runLs(0, round, `-pair${n}-${i}`)));
        (n === 1 ? alone : together).push(ms.reduce((a, m) => a + m.total, 0) / n);
      }
    }
    const k = alone.map((a, i) => together[i] / a);
    console.log(
      `\nTwo one-thread processes at once (\`--parse-workers 0\`, the whole pipeline): CPU per process alone ${f2(median(alone))} s, two at once ${f2(median(together))} s each; at once ÷ alone ${f2(median(k))} (${f2(Math.min(...k))}-${f2(Math.max(...k))}, ${pairRounds} rounds).`,
    );
  }
} finally {
  await server.close();
  rmSync(work, { recursive: true, force: true });
}
