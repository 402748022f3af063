// The worker side of the queue benchmark's floor: BullMQ's own cost per job, with a job that does
// nothing but what `runWorker` does around a walk (confirm the lock, return a result). Started by
// queue.mjs as `node queue-floor-worker.mjs REDIS_URL QUEUE [JOB_MS]`; with JOB_MS, a job first
// holds its slot that long (the pace of real sites). On a message, sends back its CPU (user + sys,
// µs) since it was ready, then stops.
import { queuePackage } from './queue-package.mjs';

const { startQueueWorker } = await queuePackage();

const jobMs = Number(process.argv[4] ?? 0);
// queue-floor-ir.mjs --no-confirm: the same jobs without the confirm's round trip, to tell its
// share of the floor (a probe: runWorker never keeps rows without it).
const confirm = process.env.USP_FLOOR_NO_CONFIRM !== '1';

const worker = startQueueWorker({
  connection: process.argv[2],
  queueName: process.argv[3],
  concurrency: 16,
  async process(job, control) {
    if (jobMs > 0) await new Promise((resolve) => setTimeout(resolve, jobMs));
    if (confirm) await control.confirm();
    return {
      site: job.site,
      status: 'ok',
      reason: null,
      pages: 0,
      sitemaps: 0,
      requests: 0,
      notModified: 0,
      skipped: 0,
      bytes: 0,
      ms: 0,
    };
  },
});
const start = process.cpuUsage();
process.once('message', () => {
  // Taken before stopping: closing is paid once per worker, not per job.
  const used = process.cpuUsage(start);
  process.send(used.user + used.system, () => {
    void worker.stop().then(() => process.exit(0));
  });
});
process.send('ready');
