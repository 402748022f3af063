import { hostname } from 'node:os';
import {
  checkSiteRunOptions,
  type PolitenessGate,
  queueWalker,
  type SiteResult,
  type SiteRunOptions,
  type SiteSink,
} from '@usp-ts/batch';
import { type BullmqSiteQueueOptions, bullmqSiteQueue } from './bullmq-site-queue.js';
import { checkConnection } from './connection.js';
import { pick } from './pick.js';
import type { QueueWorker } from './queue-worker.js';
import { redisPolitenessGate } from './redis-gate.js';

/**
 * Options of `runWorker`: the run's (`SiteRunOptions` of `@usp-ts/batch`), the engine's
 * (`BullmqSiteQueueOptions`: the queue, the lock, idling) and `onResult`.
 */
export interface RunWorkerOptions extends SiteRunOptions, Omit<BullmqSiteQueueOptions, 'onCompleted'> {
  /**
   * This worker's output (e.g. `ndjsonSink(DIR/<worker-id>)`): one set of files per worker. Required.
   * `perHost` counts requests to one host across all workers; the default `gate` is a
   * `redisPolitenessGate` on the queue's Redis, closed with the worker.
   */
  readonly sink: SiteSink;
  /**
   * This worker's name: shown on its jobs by BullMQ dashboards and the run id of the marks it saves
   * with the state. Default `<host name>-<pid>`.
   */
  readonly name?: string;
  /** Called as each site ends: its rows are kept and BullMQ has recorded the job as completed. */
  readonly onResult?: (result: SiteResult) => void;
}

const WORKER_KEYS = {
  connection: true,
  queueName: true,
  lockDurationMs: true,
  stalledIntervalMs: true,
  name: true,
  stopWhenIdle: true,
  idleMs: true,
  onResult: true,
  onError: true,
  onConnection: true,
} as const satisfies Record<Exclude<keyof RunWorkerOptions, keyof SiteRunOptions>, true>;

/**
 * A queue worker running the batch's own site job (`walkSite` of `@usp-ts/batch`, the function
 * `usp batch` runs), `sites` at a time, with the politeness gate and (optionally) the state
 * shared through Redis. Each site's result (status and counts, never its pages) goes back to the
 * producer through BullMQ; its rows go to this worker's sink.
 */
export function runWorker(options: RunWorkerOptions): QueueWorker {
  const run = checkSiteRunOptions(options, WORKER_KEYS);
  const connection = checkConnection(options.connection);
  const ownGate =
    run.gate === null
      ? redisPolitenessGate({
          connection,
          // A dead worker's request slots come back on the same time scale as its sites.
          ...(options.lockDurationMs !== undefined ? { leaseMs: options.lockDurationMs } : {}),
          perHost: run.perHost,
          maxCrawlDelayMs: run.maxCrawlDelayMs,
        })
      : null;
  const gate = run.gate ?? (ownGate as PolitenessGate);
  const runId = options.name ?? `${hostname()}-${process.pid}`;
  const queue = bullmqSiteQueue({
    connection,
    name: runId,
    ...pick(options, ['queueName', 'lockDurationMs', 'stalledIntervalMs', 'stopWhenIdle', 'idleMs']),
    ...pick(options, ['onError', 'onConnection']),
    ...(options.onResult !== undefined ? { onCompleted: options.onResult as (result: unknown) => void } : {}),
  });
  const worker = queue.consume(queueWalker(run, gate, runId), { concurrency: run.sites });
  if (ownGate === null) return worker;
  const closed = worker.closed.then(() => ownGate.close());
  return {
    stop: () => worker.stop().then(() => closed),
    closed,
  };
}
