// The STOCK floor of the queue bench (session 13): BullMQ 6 as its README shows it, none of our
// code and none of our settings, so that the floor says what the choice (one BullMQ job per
// site) costs by itself. Three roles, each its own process (queue-floor-ir.mjs --stock starts them):
//   node queue-floor-stock.mjs worker REDIS_URL QUEUE JOB_MS
//     a `Worker` with default options but `concurrency: 16` (the run's 16 sites in flight), whose
//     processor only awaits a JOB_MS timer and returns a small result; ready / stop / CPU as
//     queue-floor-worker.mjs does.
//   node queue-floor-stock.mjs producer REDIS_URL QUEUE N [events|poll]
//     one job to warm up, then `Queue.addBulk` of N jobs with default job options (chunks of 500),
//     and waits for them all:
//     `QueueEvents` counting `completed` (events), or `getJobCounts` every 500 ms (poll).
//   node queue-floor-stock.mjs timers N JOB_MS
//     the same N timers, 16 at a time, without BullMQ: what a worker pays for its jobs' timers
//     alone, taken off the worker's figure.
// Forked with an IPC channel (queue.mjs), the producer and the timers send their CPU (user + sys,
// µs) from when they are ready (modules loaded, connections up) to their end.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = process.env.USP_FLOOR_ROOT ?? fileURLToPath(new URL('../../..', import.meta.url));
const require = createRequire(join(root, 'packages/queue-bullmq/package.json'));
const CONCURRENCY = 16;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const result = (site) => ({ site, status: 'ok', reason: null, pages: 0, sitemaps: 0, requests: 0, ms: 0 });

function report(start) {
  const used = process.cpuUsage(start);
  if (process.send) process.send(used.user + used.system);
}

const role = process.argv[2];
if (role === 'timers') {
  const n = Number(process.argv[3]);
  const jobMs = Number(process.argv[4]);
  let next = 0;
  const start = process.cpuUsage();
  const lane = async () => {
    while (next < n) {
      const i = next++;
      if (jobMs > 0) await sleep(jobMs);
      result(`http://s${i}.invalid/`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  report(start);
} else if (role === 'worker') {
  const { Worker } = require('bullmq');
  const [url, queueName, jobMsArg] = process.argv.slice(3);
  const jobMs = Number(jobMsArg ?? 0);
  const worker = new Worker(
    queueName,
    async (job) => {
      if (jobMs > 0) await sleep(jobMs);
      return result(job.data.site);
    },
    { connection: { url, maxRetriesPerRequest: null }, concurrency: CONCURRENCY },
  );
  await worker.waitUntilReady();
  const start = process.cpuUsage();
  process.once('message', () => {
    const used = process.cpuUsage(start);
    process.send(used.user + used.system, () => {
      void worker.close().then(() => process.exit(0));
    });
  });
  process.send('ready');
} else if (role === 'producer') {
  const { Queue, QueueEvents } = require('bullmq');
  const [url, queueName, count, how = 'events'] = process.argv.slice(3);
  const n = Number(count);
  const connection = { url, maxRetriesPerRequest: null };
  const queue = new Queue(queueName, { connection });
  let done = 0;
  let events = null;
  let allDone = null;
  if (how === 'events') {
    events = new QueueEvents(queueName, { connection });
    await events.waitUntilReady();
    allDone = new Promise((resolve) => {
      events.on('completed', ({ jobId }) => {
        if (jobId !== 'warm' && ++done === n) resolve();
      });
    });
  }
  await queue.waitUntilReady();
  // One job first, as queue.mjs's own floor does: the producer's code paths are run once before
  // the clock starts.
  const warm = new Promise((resolve) => {
    if (events === null) return resolve();
    events.on('completed', ({ jobId }) => {
      if (jobId === 'warm') resolve();
    });
  });
  await queue.add('site', { site: 'http://warm.invalid/' }, { jobId: 'warm' });
  if (events === null) {
    while ((await queue.getJobCounts('completed')).completed < 1) await sleep(100);
  }
  await warm;
  const start = process.cpuUsage();
  for (let i = 0; i < n; i += 500) {
    const jobs = [];
    for (let k = i; k < Math.min(n, i + 500); k++)
      jobs.push({ name: 'site', data: { site: `http://s${k}.invalid/` }, opts: { jobId: `s${k}` } });
    await queue.addBulk(jobs);
  }
  if (how === 'events') await allDone;
  else {
    for (;;) {
      const counts = await queue.getJobCounts('completed', 'failed');
      if (counts.completed + counts.failed >= n + 1) break;
      await sleep(500);
    }
  }
  report(start);
  await events?.close();
  await queue.close();
} else throw new Error(`queue-floor-stock: unknown role ${role}`);
