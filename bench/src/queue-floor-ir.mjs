// BullMQ's own cost per job in instructions (callgrind), producer and worker apart: the queue
// bench's floor (jobs that only confirm their lock) run for two list sizes, each process counted
// whole; per job = the difference / the difference in jobs, so start-up and closing cancel out.
// Usage: node src/queue-floor-ir.mjs [--jobs 100,500] [--job-ms 0] [--compare DIR] [--cli] [--stock events|poll] [--no-confirm] [--no-callgrind [--cpu-prof DIR]]
// --stock: BullMQ as it ships, none of our code (proc/queue-floor-stock.mjs), less the same timers
// run without BullMQ: the floor the issue's one-job-per-site choice sets by itself.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startTestRedis } from '@usp-ts/test-redis';
import { Redis } from 'ioredis';
import { PRODUCT_JIT_FLAGS } from './proc/queue-package.mjs';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '100,500' },
    'job-ms': { type: 'string', default: '0' },
    'no-callgrind': { type: 'boolean', default: false },
    // Another built checkout (e.g. /work/wt/base12): its queue package is counted instead.
    compare: { type: 'string' },
    // The producer as users run it: `usp batch --queue` of this checkout (or of --compare's).
    cli: { type: 'boolean', default: false },
    // The floor scripts with the JIT setting usp batch and usp worker give themselves (batch-jit.ts).
    'product-jit': { type: 'boolean', default: false },
    // With --no-callgrind: each process writes a V8 CPU profile into this directory.
    'cpu-prof': { type: 'string' },
    // BullMQ with default options (concurrency 16) and a producer waiting with QueueEvents
    // (events) or counts read every 500 ms (poll); the timers alone are measured and taken off.
    stock: { type: 'string' },
    // Our floor's jobs without the confirm's round trip: its share of the floor.
    'no-confirm': { type: 'boolean', default: false },
  },
});
const sizes = values.jobs.split(',').map(Number);
const work = mkdtempSync(join(tmpdir(), 'usp-floor-ir-'));
const proc = (name) => fileURLToPath(new URL(`proc/${name}`, import.meta.url));

let runs = 0;
const jit = values['product-jit'] ? PRODUCT_JIT_FLAGS : [];

function start(script, args, ipc) {
  const out = join(work, `cg-${++runs}.out`);
  // Without callgrind: GNU time's user + sys CPU, in µs.
  const cmd = values['no-callgrind']
    ? [
        '/usr/bin/time',
        [
          '-f',
          'usp-cpu %U %S',
          process.execPath,
          ...(values['cpu-prof']
            ? ['--cpu-prof', '--cpu-prof-interval', '250', '--cpu-prof-dir', values['cpu-prof']]
            : []),
          ...jit,
          script,
          ...args,
        ],
      ]
    : [
        'valgrind',
        [
          '--tool=callgrind',
          '--smc-check=all-non-file',
          `--callgrind-out-file=${out}`,
          '--trace-children=no',
          process.execPath,
          ...jit,
          script,
          ...args,
        ],
      ];
  const env = {
    ...process.env,
    ...(values.compare ? { USP_FLOOR_ROOT: values.compare } : {}),
    ...(values['no-confirm'] ? { USP_FLOOR_NO_CONFIRM: '1' } : {}),
  };
  const child = spawn(cmd[0], cmd[1], { env, stdio: ['ignore', 'inherit', 'pipe', ...(ipc ? ['ipc'] : [])] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let err = '';
  child.stderr.on('data', (d) => {
    err += d;
  });
  const done = once(child, 'exit').then(([code]) => {
    if (code !== 0) throw new Error(`${script} exited ${code}: ${err.slice(-2000)}`);
    if (values['no-callgrind']) {
      const [, user, sys] = /usp-cpu ([\d.]+) ([\d.]+)/.exec(err);
      return (Number(user) + Number(sys)) * 1e6;
    }
    const text = readFileSync(out, 'utf8');
    const m = /^summary: (\d+)/m.exec(text) ?? /^totals: (\d+)/m.exec(text);
    return Number(m[1]);
  });
  return { child, done };
}

const unit = values['no-callgrind'] ? 'µs CPU' : 'instructions';
// Per job: µs of CPU, or thousands of instructions.
const perJob = (x) => (values['no-callgrind'] ? x : x / 1e3).toFixed(1);
const perJobUnit = values['no-callgrind'] ? 'µs CPU' : 'k instructions';
const children = new Set();
const redis = await startTestRedis();
const admin = new Redis(redis.url);
try {
  const counts = [];
  for (const n of sizes) {
    await admin.flushall();
    await admin.config('RESETSTAT');
    const stock = values.stock;
    const w = stock
      ? start(proc('queue-floor-stock.mjs'), ['worker', redis.url, 'floor', values['job-ms']], true)
      : start(proc('queue-floor-worker.mjs'), [redis.url, 'floor', values['job-ms']], true);
    const [ready] = await once(w.child, 'message');
    if (ready !== 'ready') throw new Error(`worker: ${ready}`);
    let p;
    if (stock)
      p = start(proc('queue-floor-stock.mjs'), ['producer', redis.url, 'floor', String(n), stock], false);
    else if (values.cli) {
      const list = join(work, `sites-${n}.txt`);
      writeFileSync(list, Array.from({ length: n }, (_, i) => `http://s${i}.invalid/\n`).join(''));
      const root = values.compare ?? fileURLToPath(new URL('../..', import.meta.url));
      const cli = join(root, 'packages/usp/dist/cli.js');
      p = start(cli, ['batch', '--queue', redis.url, '--queue-name', 'floor', '--no-progress', list], false);
    } else p = start(proc('queue-floor-producer.mjs'), [redis.url, 'floor', String(n)], false);
    const producer = await p.done;
    const cmds = Number(/total_commands_processed:(\d+)/.exec(await admin.info('stats'))[1]);
    w.child.send('stop');
    await once(w.child, 'message');
    const worker = await w.done;
    // The same timers without BullMQ, in a process of their own (stock only; 0 otherwise).
    const timers = stock
      ? await start(proc('queue-floor-stock.mjs'), ['timers', String(n), values['job-ms']], false).done
      : 0;
    counts.push({ n, producer, worker, timers, cmds });
    if (process.env.FLOOR_STATS)
      console.log(
        (await admin.info('commandstats'))
          .split('\n')
          .filter((l) => l.startsWith('cmdstat'))
          .map((l) => l.replace(/,usec=.*?(,rejected|$)/, ''))
          .join('\n'),
      );
    console.log(
      `${n} jobs: producer ${(producer / 1e6).toFixed(2)} M, worker ${(worker / 1e6).toFixed(2)} M${stock ? `, timers alone ${(timers / 1e6).toFixed(2)} M` : ''} ${unit}; ${cmds} Redis commands`,
    );
  }
  const [a, b] = [counts[0], counts[counts.length - 1]];
  const d = b.n - a.n;
  const timers = (b.timers - a.timers) / d;
  console.log(
    `per job: producer ${perJob((b.producer - a.producer) / d)}, worker ${perJob((b.worker - a.worker) / d - timers)}${values.stock ? ` (timers alone ${perJob(timers)} taken off)` : ''} ${perJobUnit}; Redis commands ${((b.cmds - a.cmds) / d).toFixed(2)}`,
  );
} finally {
  for (const child of children) child.kill('SIGKILL');
  await admin.quit();
  await redis.stop();
  rmSync(work, { recursive: true, force: true });
}
