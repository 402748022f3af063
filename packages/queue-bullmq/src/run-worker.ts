import { hostname } from 'node:os';
import {
  DEFAULT_MAX_CRAWL_DELAY_MS,
  DEFAULT_PER_HOST,
  isCommitFailure,
  OutputError,
  type PolitenessGate,
  type SiteResult,
  type SiteSink,
  type SiteWalkOptions,
  type StateStore,
  StateStoreError,
  walkSite,
} from '@usp-ts/batch';
import { InvalidOptionError, type Registry, rejectUnknownOptions, type WebClient } from '@usp-ts/core';
import { checkConnection, type RedisConnection, type RedisConnectionState } from './connection.js';
import {
  type JobControl,
  JobLockLostError,
  JobReleasedError,
  type QueueWorker,
  startQueueWorker,
} from './queue-worker.js';
import { redisPolitenessGate } from './redis-gate.js';

/** Options of `runWorker`. */
export interface RunWorkerOptions {
  readonly connection: RedisConnection;
  /** Default `usp-sites`. */
  readonly queueName?: string;
  /** The shared HTTP client (`createWebClient` of `@usp-ts/fetcher`). Required. */
  readonly webClient: WebClient;
  /** The formats (`createDefaultRegistry()` of `usp`). Required. */
  readonly registry: Registry;
  /** This worker's output (e.g. `ndjsonSink(DIR/<worker-id>)`): one set of files per worker. Required. */
  readonly sink: SiteSink;
  /** Incremental state shared by the workers (`redisStateStore`). Default: none. */
  readonly state?: StateStore | null;
  /** Site walks at once in this worker. Default 16. */
  readonly sites?: number;
  /** Requests in flight to one host across all workers (ignored when `gate` is given). Default 2. */
  readonly perHost?: number;
  /** Longest robots.txt Crawl-delay honoured (ignored when `gate` is given). Default 10,000 ms. */
  readonly maxCrawlDelayMs?: number;
  /** Your own gate. Default: `redisPolitenessGate` on the queue's Redis, closed with the worker. */
  readonly gate?: PolitenessGate;
  /** Each site's wall-clock budget. Default 10 minutes. */
  readonly siteDeadlineMs?: number;
  /** A full walk of a site when its last one is older than this. Default: never. */
  readonly fullEveryMs?: number;
  /** The one probe of a site that gave no answer last time, in ms (default 1,500; `walkSite`). */
  readonly probeTimeoutMs?: number;
  readonly walkOptions?: SiteWalkOptions;
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

const OPTION_KEYS = {
  connection: true,
  queueName: true,
  webClient: true,
  registry: true,
  sink: true,
  state: true,
  sites: true,
  perHost: true,
  maxCrawlDelayMs: true,
  gate: true,
  siteDeadlineMs: true,
  fullEveryMs: true,
  probeTimeoutMs: true,
  walkOptions: true,
  lockDurationMs: true,
  stalledIntervalMs: true,
  name: true,
  stopWhenIdle: true,
  idleMs: true,
  onResult: true,
  onError: true,
  onConnection: true,
} satisfies Record<keyof RunWorkerOptions, true>;

/**
 * The worker's view of its sink: a commit first makes sure the job is still this worker's and
 * records this try's copy (see `JobControl.confirm`), then keeps the rows (pages, sitemaps, the
 * site's row last) tagged with the copy's token and the earlier copies it makes void, and only then
 * saves the site's new state. In that order a worker killed at any point leaves either no row of
 * the site (walked again by another worker, from the state as it was) or all of them with the old
 * state (the next run sees the same changes again): never a state that hides pages nobody wrote.
 * Killed after its rows and before BullMQ recorded the job, it leaves a copy that the next try
 * makes void (see `voidedCopies`). A sink that keeps the state in its own transactions
 * (`ownState`, a database) takes the save into the commit: rows and state, both or neither. The
 * site's rows are filed under the job's run (a store that keeps runs follows the queue's).
 */
function confirmingSink(
  sink: SiteSink,
  control: JobControl,
  runId: string,
  state: StateStore | null,
): SiteSink & { committed: SiteResult | null } {
  const fence = async () => ({ token: control.token, voids: await control.confirm() });
  const together = state !== null && sink.ownState === state;
  return {
    /** The result this try kept, once its rows are written. */
    committed: null,
    begin(site) {
      const self = this;
      const output = sink.begin(site, control.run !== undefined ? { run: control.run } : undefined);
      return {
        // The line the job made with the state's change marks: not serialised a second time.
        page: (row, json) => output.page(row, json),
        sitemap: (row) => output.sitemap(row),
        async commit(result, options) {
          const saveState = options?.saveState;
          if (together && saveState !== undefined) {
            await output.commit(result, { fence, saveState });
            self.committed = result;
            return;
          }
          await output.commit(result, { fence });
          self.committed = result;
          await saveState?.({ runId, site, offsets: {} });
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
  return (
    error instanceof JobReleasedError ||
    error instanceof JobLockLostError ||
    error instanceof OutputError ||
    error instanceof StateStoreError ||
    isCommitFailure(error)
  );
}

/** The `error` row of a site whose walk failed in an unexpected way. */
function internalErrorResult(site: string, error: unknown): SiteResult {
  const message = error instanceof Error ? error.message : String(error);
  return {
    site,
    status: 'error',
    reason: `internal error: ${message}`,
    pages: 0,
    sitemaps: 0,
    requests: 0,
    notModified: 0,
    skipped: 0,
    bytes: 0,
    ms: 0,
  };
}

/**
 * A queue worker running the batch's own site job (`walkSite` of `@usp-ts/batch`, the function
 * `usp batch` runs), `sites` at a time, with the politeness gate and (optionally) the state
 * shared through Redis. Each site's result (status and counts, never its pages) goes back to the
 * producer through BullMQ; its rows go to this worker's sink.
 */
export function runWorker(options: RunWorkerOptions): QueueWorker {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionError('options', 'expected an object');
  rejectUnknownOptions(options, OPTION_KEYS);
  const connection = checkConnection(options.connection);
  for (const name of ['webClient', 'registry', 'sink'] as const) {
    if (options[name] === undefined || options[name] === null) throw new InvalidOptionError(name, 'required');
  }
  const ownGate =
    options.gate === undefined
      ? redisPolitenessGate({
          connection,
          // A dead worker's request slots come back on the same time scale as its sites.
          ...(options.lockDurationMs !== undefined ? { leaseMs: options.lockDurationMs } : {}),
          perHost: options.perHost ?? DEFAULT_PER_HOST,
          maxCrawlDelayMs: options.maxCrawlDelayMs ?? DEFAULT_MAX_CRAWL_DELAY_MS,
        })
      : null;
  const gate = options.gate ?? ownGate!;
  const runId = options.name ?? `${hostname()}-${process.pid}`;
  const worker = startQueueWorker<SiteResult>({
    connection,
    ...(options.queueName !== undefined ? { queueName: options.queueName } : {}),
    ...(options.sites !== undefined ? { concurrency: options.sites } : {}),
    ...(options.lockDurationMs !== undefined ? { lockDurationMs: options.lockDurationMs } : {}),
    ...(options.stalledIntervalMs !== undefined ? { stalledIntervalMs: options.stalledIntervalMs } : {}),
    name: runId,
    ...(options.stopWhenIdle !== undefined ? { stopWhenIdle: options.stopWhenIdle } : {}),
    ...(options.idleMs !== undefined ? { idleMs: options.idleMs } : {}),
    ...(options.onError !== undefined ? { onError: options.onError } : {}),
    ...(options.onConnection !== undefined ? { onConnection: options.onConnection } : {}),
    ...(options.onResult !== undefined ? { onCompleted: options.onResult } : {}),
    async process(job, control) {
      const sink = confirmingSink(options.sink, control, runId, options.state ?? null);
      let result: SiteResult;
      try {
        result = await walkSite(job.full === true ? { site: job.site, full: true } : { site: job.site }, {
          webClient: options.webClient,
          registry: options.registry,
          gate,
          sink,
          state: options.state ?? null,
          ...(options.siteDeadlineMs !== undefined ? { deadlineMs: options.siteDeadlineMs } : {}),
          ...(options.fullEveryMs !== undefined ? { fullEveryMs: options.fullEveryMs } : {}),
          ...(options.probeTimeoutMs !== undefined ? { probeTimeoutMs: options.probeTimeoutMs } : {}),
          ...(options.walkOptions !== undefined ? { walkOptions: options.walkOptions } : {}),
          signal: control.signal,
        });
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
    },
  });
  if (ownGate === null) return worker;
  const closed = worker.closed.then(() => ownGate.close());
  return {
    stop: () => worker.stop().then(() => closed),
    closed,
  };
}
