// BullMQ's own cost per job in instructions (callgrind), producer and worker apart: the queue
// bench's floor (jobs that only confirm their lock) run for two list sizes, each process counted
// whole; per job = the difference / the difference in jobs, so start-up and closing cancel out.
// Usage: node src/queue-floor-ir.mjs [--jobs 100,500] [--job-ms 0] [--compare DIR] [--no-callgrind [--cpu-prof DIR]]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startTestRedis } from '@usp-ts/test-redis';
import { Redis } from 'ioredis';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '100,500' },
    'job-ms': { type: 'string', default: '0' },
    'no-callgrind': { type: 'boolean', default: false },
    // Another built checkout (e.g. /work/wt/base12): its queue package is counted instead.
    compare: { type: 'string' },
    // With --no-callgrind: each process writes a V8 CPU profile into this directory.
    'cpu-prof': { type: 'string' },
  },
});
const sizes = values.jobs.split(',').map(Number);
const work = mkdtempSync(join(tmpdir(), 'usp-floor-ir-'));
const proc = (name) => fileURLToPath(new URL(`proc/${name}`, import.meta.url));

let runs = 0;
function start(script, args, ipc) {
  const out = join(work, `cg-${++runs}.out`);
  const cmd = values['no-callgrind']
    ? [
        process.execPath,
        [
          ...(values['cpu-prof']
            ? ['--cpu-prof', '--cpu-prof-interval', '250', '--cpu-prof-dir', values['cpu-prof']]
            : []),
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
          script,
          ...args,
        ],
      ];
  const env = values.compare ? { ...process.env, USP_FLOOR_ROOT: values.compare } : process.env;
  const child = spawn(cmd[0], cmd[1], { env, stdio: ['ignore', 'inherit', 'pipe', ...(ipc ? ['ipc'] : [])] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let err = '';
  child.stderr.on('data', (d) => {
    err += d;
  });
  const done = once(child, 'exit').then(([code]) => {
    if (code !== 0) throw new Error(`${script} exited ${code}: ${err.slice(-2000)}`);
    if (values['no-callgrind']) return 0;
    const text = readFileSync(out, 'utf8');
    const m = /^summary: (\d+)/m.exec(text) ?? /^totals: (\d+)/m.exec(text);
    return Number(m[1]);
  });
  return { child, done };
}

const children = new Set();
const redis = await startTestRedis();
const admin = new Redis(redis.url);
try {
  const counts = [];
  for (const n of sizes) {
    await admin.flushall();
    const w = start(proc('queue-floor-worker.mjs'), [redis.url, 'floor', values['job-ms']], true);
    const [ready] = await once(w.child, 'message');
    if (ready !== 'ready') throw new Error(`worker: ${ready}`);
    const p = start(proc('queue-floor-producer.mjs'), [redis.url, 'floor', String(n)], false);
    const producer = await p.done;
    const cmds = Number(/total_commands_processed:(\d+)/.exec(await admin.info('stats'))[1]);
    w.child.send('stop');
    await once(w.child, 'message');
    const worker = await w.done;
    counts.push({ n, producer, worker, cmds });
    if (process.env.FLOOR_STATS)
      console.log(
        (await admin.info('commandstats'))
          .split('\n')
          .filter((l) => l.startsWith('cmdstat'))
          .map((l) => l.replace(/,usec=.*?(,rejected|$)/, ''))
          .join('\n'),
      );
    console.log(
      `${n} jobs: producer ${(producer / 1e6).toFixed(1)} M, worker ${(worker / 1e6).toFixed(1)} M instructions; ${cmds} Redis commands`,
    );
  }
  const [a, b] = [counts[0], counts[counts.length - 1]];
  const d = b.n - a.n;
  console.log(
    `per job: producer ${((b.producer - a.producer) / d / 1e3).toFixed(1)} k, worker ${((b.worker - a.worker) / d / 1e3).toFixed(1)} k instructions; Redis commands ${((b.cmds - a.cmds) / d).toFixed(2)}`,
  );
} finally {
  for (const child of children) child.kill('SIGKILL');
  await admin.quit();
  await redis.stop();
  rmSync(work, { recursive: true, force: true });
}
