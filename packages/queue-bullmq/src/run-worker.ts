import { hostname } from 'node:os';
import {
  checkSiteRunOptions,
  internalErrorResult,
  isRunFailure,
  type PolitenessGate,
  type SiteJob,
  type SiteResult,
  type SiteRun,
  type SiteRunOptions,
  type SiteSink,
  siteJobContext,
  walkSite,
} from '@usp-ts/batch';
import { checkConnection, type RedisConnection, type RedisConnectionState } from './connection.js';
import {
  type JobControl,
  JobLockLostError,
  JobReleasedError,
  type QueueWorker,
  startQueueWorker,
} from './queue-worker.js';
import { redisPolitenessGate } from './redis-gate.js';

/** Options of `runWorker`: the run's (`SiteRunOptions` of `@usp-ts/batch`) and the worker's own. */
export interface RunWorkerOptions extends SiteRunOptions {
  readonly connection: RedisConnection;
  /** Default `usp-sites`. */
  readonly queueName?: string;
  /**
   * This worker's output (e.g. `ndjsonSink(DIR/<worker-id>)`): one set of files per worker. Required.
   * `perHost` counts requests to one host across all workers; the default `gate` is a
   * `redisPolitenessGate` on the queue's Redis, closed with the worker.
   */
  readonly sink: SiteSink;
  /** See `startQueueWorker`. Default 30,000 ms. */
  readonly lockDurationMs?: number;
  /** See `startQueueWorker`. Default 30,000 ms. */
  readonly stalledIntervalMs?: number;
  /**
   * This worker's name: shown on its jobs by BullMQ dashboards and the run id of the marks it saves
   * with the state. Default `<host name>-<pid>`.
   */
  readonly name?: string;
  /** See `startQueueWorker`. Default `false`. */
  readonly stopWhenIdle?: boolean;
  /** See `startQueueWorker`. Default 3,000 ms. */
  readonly idleMs?: number;
  /** Called as each site ends: its rows are kept and BullMQ has recorded the job as completed. */
  readonly onResult?: (result: SiteResult) => void;
  readonly onError?: (error: Error) => void;
  /** See `startQueueWorker`: Redis went away, once, and came back, once. */
  readonly onConnection?: (state: RedisConnectionState, address: string) => void;
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
 * The worker's view of its sink: a commit first makes sure the job is still this worker's and
 * records this try's copy (see `JobControl.confirm`), then keeps the rows (pages, sitemaps, the
 * site's row last) tagged with the copy's token and the earlier copies it makes void, and only then
 * saves the site's new state. In that order a worker killed at any point leaves either no row of
 * the site (walked again by another worker, from the state as it was) or all of them with the old
 * state (the next run sees the same changes again): never a state that hides pages nobody wrote.
 * Killed after its rows and before BullMQ recorded the job, it leaves a copy that the next try
 * makes void (see `voidedCopies`).
 */
function confirmingSink(
  sink: SiteSink,
  control: JobControl,
  runId: string,
): SiteSink & { committed: SiteResult | null } {
  const fence = async () => ({ token: control.token, voids: await control.confirm() });
  return {
    /** The result this try kept, once its rows are written. */
    committed: null,
    begin(site) {
      const self = this;
      const output = sink.begin(site);
      return {
        // The line the job made with the state's change marks: not serialised a second time.
        page: (row, json) => output.page(row, json),
        sitemap: (row) => output.sitemap(row),
        async commit(result, options) {
          await output.commit(result, { fence });
          self.committed = result;
          await options?.saveState?.({ runId, site, offsets: {} });
        },
        discard: () => output.discard(),
      };
    },
  };
}

/**
 * Errors that are the job's, not the site's: the output or the state cannot be written (the worker
 * stops), the job was handed back or taken over. They fail the try (retried by BullMQ).
 */
function isJobFailure(error: unknown): boolean {
  return error instanceof JobReleasedError || error instanceof JobLockLostError || isRunFailure(error);
}

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
  const worker = startQueueWorker<SiteResult>({
    connection,
    ...(options.queueName !== undefined ? { queueName: options.queueName } : {}),
    concurrency: run.sites,
    ...(options.lockDurationMs !== undefined ? { lockDurationMs: options.lockDurationMs } : {}),
    ...(options.stalledIntervalMs !== undefined ? { stalledIntervalMs: options.stalledIntervalMs } : {}),
    name: runId,
    ...(options.stopWhenIdle !== undefined ? { stopWhenIdle: options.stopWhenIdle } : {}),
    ...(options.idleMs !== undefined ? { idleMs: options.idleMs } : {}),
    ...(options.onError !== undefined ? { onError: options.onError } : {}),
    ...(options.onConnection !== undefined ? { onConnection: options.onConnection } : {}),
    ...(options.onResult !== undefined ? { onCompleted: options.onResult } : {}),
    process: (job, control) => walkJob(run, gate, runId, job, control),
  });
  if (ownGate === null) return worker;
  const closed = worker.closed.then(() => ownGate.close());
  return {
    stop: () => worker.stop().then(() => closed),
    closed,
  };
}

/** One job: the site walked with a sink that fences its commit through the queue. */
async function walkJob(
  run: SiteRun,
  gate: PolitenessGate,
  runId: string,
  job: SiteJob,
  control: JobControl,
): Promise<SiteResult> {
  const sink = confirmingSink(run.sink, control, runId);
  let result: SiteResult;
  try {
    result = await walkSite(
      job.full === true ? { site: job.site, full: true } : { site: job.site },
      siteJobContext(run, { gate, sink, signal: control.signal }),
    );
  } catch (error) {
    if (isJobFailure(error) || control.signal.aborted) throw error;
    // Defence in depth: a bug (here, in a plugin, a client) that escaped the walk is this
    // site's `error` row with its message, as in usp batch; the worker goes on with the others.
    // Thrown after the site's rows were kept (in a cleanup), it leaves them as they are.
    if (sink.committed !== null) result = sink.committed;
    else {
      result = internalErrorResult(job.site, error);
      await sink.begin(job.site).commit(result);
    }
  }
  // An interrupted walk kept nothing: the job goes back to the queue, walked again from the start.
  if (control.signal.aborted && result.status === 'partial' && result.reason === 'aborted') {
    throw new JobReleasedError();
  }
  return result;
}
