import { randomUUID } from 'node:crypto';
import type { SiteJob } from '@usp-ts/batch';
import { InvalidOptionError, rejectUnknownOptions } from '@usp-ts/core';
import type { JobsOptions } from 'bullmq';
import { bullmq } from './cjs-deps.js';
import {
  assertRedisReachable,
  bullConnection,
  checkConnection,
  type RedisConnection,
  type RedisConnectionState,
  RedisOutage,
} from './connection.js';
import { voidFailedCopies } from './copy-claims.js';
import { type AddingLease, holdAddingLease } from './idle-watch.js';
import type { QueueJob } from './job-data.js';
import { type JobEndReader, readJobEnds } from './job-ends.js';
import { siteJobId, siteOfJobId } from './job-id.js';
import { DEFAULT_KEEP_RUN_MS, lookupJobs, openRun, touchRun } from './runs.js';
import { checkQueueName, DEFAULT_QUEUE_NAME } from './site-queue.js';

/** Options of `enqueueSites`. */
export interface EnqueueSitesOptions<R = unknown> {
  readonly connection: RedisConnection;
  /** The BullMQ queue (no `:`). Default `usp-sites`. */
  readonly queueName?: string;
  /** Tries of a job that fails (a bug or an output that cannot be written, not a site problem), the first included. Default 3. */
  readonly attempts?: number;
  /** First wait before a retry, doubled each time. Default 10,000 ms. */
  readonly backoffMs?: number;
  /** Walk these sites in full: no conditional requests, no `<lastmod>` skips. Default `false`. */
  readonly full?: boolean;
  /**
   * Open a new run instead of joining the queue's open one: every site is walked again, even one
   * the open run finished. Default `false`.
   */
  readonly newRun?: boolean;
  /** How long a run stays open after it was last used (enqueued to, a site finished). Default 1 hour. */
  readonly keepRunMs?: number;
  /**
   * Wait until every site of the list has finished (walked, or failed for good), calling
   * `onResult` for each. Default `false`: enqueue and return.
   */
  readonly wait?: boolean;
  /** Called once the whole list is in the queue (before the wait). */
  readonly onEnqueued?: (report: EnqueueReport) => void;
  /** Called as each site finishes, with the worker's result (status and counts) or the job's error. */
  readonly onResult?: (outcome: SiteOutcome<R>) => void;
  /** Stops waiting (the jobs stay queued; workers go on). */
  readonly signal?: AbortSignal;
  /** Told once when Redis goes away mid-run (`'away'`, with its `HOST:PORT`) and once when it is back. */
  readonly onConnection?: (state: RedisConnectionState, address: string) => void;
  /** While waiting, every second: the jobs of the queue being walked now, by any worker (for a progress line). */
  readonly onActive?: (active: number) => void;
}

/** How the list went into the queue. */
export interface EnqueueReport {
  /** The run the sites belong to: the queue's open run, joined, or a new one. */
  readonly run: string;
  /** Sites in the list (each once). */
  readonly sites: number;
  /** Jobs added. */
  readonly added: number;
  /** Sites already waiting or being walked (enqueued by an earlier call): not added again. */
  readonly alreadyQueued: number;
  /** Sites the run finished earlier (another producer's, or this list's before a restart): not walked again, their recorded result reported. */
  readonly doneBefore: number;
  /** Sites whose job had failed for good earlier: that job was removed and the site enqueued again. */
  readonly requeued: number;
}

/** How one site of the list ended. */
export type SiteOutcome<R = unknown> =
  | { readonly site: string; readonly ok: true; readonly result: R; readonly before?: true }
  | {
      readonly site: string;
      readonly ok: false;
      readonly error: string;
      readonly attempts: number;
      /** The job vanished from Redis (a restart without persistence): nothing of it was kept. */
      readonly lost?: true;
    };

/** The end of a waiting `enqueueSites`. */
export interface EnqueueResult extends EnqueueReport {
  /** Sites that finished (walked, failed or lost); equals `sites` unless the wait was aborted. */
  readonly finished: number;
  /** Jobs that failed for good, with their last error: what the summary lists. */
  readonly failed: readonly { readonly site: string; readonly error: string; readonly attempts: number }[];
  /** Sites whose job Redis lost while they waited or ran (a restart without persistence). */
  readonly lost: readonly string[];
}

const OPTION_KEYS = {
  connection: true,
  queueName: true,
  attempts: true,
  backoffMs: true,
  full: true,
  newRun: true,
  keepRunMs: true,
  wait: true,
  onEnqueued: true,
  onResult: true,
  signal: true,
  onConnection: true,
  onActive: true,
} satisfies Record<keyof EnqueueSitesOptions, true>;

/** Jobs added per round trip. */
const CHUNK = 500;

/**
 * How often a waiting producer reads the jobs that ended (see `readJobEnds`). Each read costs about
 * the same however many ends it brings: a producer waiting 42 s for 100 slow jobs spent 181 ms
 * CPU reading every 200 ms, 69 ms every 1,000 ms (under load). The progress line and the end are
 * at most this late.
 */
const READ_ENDS_MS = 500;

/**
 * How often a waiting producer keeps its run open and checks that Redis still has it: a Redis
 * without persistence that restarts forgets every job, and a producer waiting for them would
 * wait for ever. One small script a check; the jobs are looked at only when the run is gone.
 */
const LOST_CHECK_MS = 2_000;

/** How often a waiting producer with `onActive` reads how many jobs are being walked. */
const ACTIVE_EVERY_MS = 1_000;

/** The reason given for a lost job. */
const LOST_REASON = 'lost: Redis lost the job (restarted without persistence?); nothing of it was kept';

function positiveInt(name: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min) return value;
  throw new InvalidOptionError(name, `expected an integer >= ${min}, got ${String(value)}`);
}

/** The wait's bookkeeping: sites pending, and how those that ended are told. */
class Waiting<R> {
  readonly pending = new Set<string>();
  readonly failed: { site: string; error: string; attempts: number }[] = [];
  readonly lost: string[] = [];
  finished = 0;
  wake: (() => void) | null = null;
  // A job found waiting or active may finish between the existence check and `pending.add`: ends
  // of jobs not yet pending are kept until the chunk they belong to is settled, then dropped.
  readonly early = new Map<string, SiteOutcome<R>>();
  enqueueing = true;
  constructor(private readonly onResult: ((outcome: SiteOutcome<R>) => void) | undefined) {}

  settle(outcome: SiteOutcome<R>): void {
    this.finished++;
    if (!outcome.ok) {
      if (outcome.lost === true) this.lost.push(outcome.site);
      else this.failed.push({ site: outcome.site, error: outcome.error, attempts: outcome.attempts });
    }
    this.onResult?.(outcome);
    this.wake?.();
  }

  deliver(jobId: string, outcome: SiteOutcome<R>): void {
    if (this.pending.delete(jobId)) this.settle(outcome);
    else if (this.enqueueing) this.early.set(jobId, outcome);
  }

  /** Settles the ends that came before their chunk's jobs were pending. */
  settleEarly(ids: readonly string[]): void {
    for (const id of ids) {
      const outcome = this.early.get(id);
      if (outcome !== undefined && this.pending.delete(id)) this.settle(outcome);
    }
    this.early.clear();
  }
}

/**
 * Puts one job per site on the queue, its id the site (normalised homepage: pass sites as the
 * batch's site list gives them), so a site already waiting or being walked is not added twice.
 * The sites belong to the queue's open run (see "Runs" in the README): a site that run finished
 * already is not enqueued again, its recorded result is reported. Completed jobs are removed once
 * their result is published; a job that had failed for good is removed and enqueued afresh.
 *
 * With `wait`, reads the jobs that end from before the first job is added (in batches, every
 * 500 ms) and returns once every site of the list has finished; each worker's result reaches
 * `onResult`. Jobs that Redis loses meanwhile (a restart without persistence) are found within
 * a few seconds of its return and end as `lost`.
 *
 * A connection given as a URL is checked with one PING first: a Redis that does not answer
 * within 5 s rejects with `RedisUnreachableError` (code `USP_CONNECTION`) instead of retrying
 * for ever. Once the run has started, a Redis restart is waited out.
 */
export async function enqueueSites<R = unknown>(
  sites: Iterable<string> | AsyncIterable<string>,
  options: EnqueueSitesOptions<R>,
): Promise<EnqueueResult> {
  return enqueueJobs(sites, options);
}

/**
 * `enqueueSites` for a list whose items may each be walked in full (`{ site, full: true }`, as
 * batch's `SiteJob`): one queue opened for the whole list, the jobs added in its order.
 */
export async function enqueueJobs<R = unknown>(
  jobs: Iterable<string | SiteJob> | AsyncIterable<string | SiteJob>,
  options: EnqueueSitesOptions<R>,
): Promise<EnqueueResult> {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionError('options', 'expected an object');
  rejectUnknownOptions(options, OPTION_KEYS);
  const connection = checkConnection(options.connection);
  const queueName = checkQueueName(options.queueName ?? DEFAULT_QUEUE_NAME);
  const attempts = positiveInt('attempts', options.attempts, 3, 1);
  const backoffMs = positiveInt('backoffMs', options.backoffMs, 10_000, 0);
  const keepRunMs = positiveInt('keepRunMs', options.keepRunMs, DEFAULT_KEEP_RUN_MS, 1_000);
  const wait = options.wait === true;
  await assertRedisReachable(connection, options.signal !== undefined ? { signal: options.signal } : {});

  const queue = new bullmq.Queue<QueueJob, R>(queueName, { connection: bullConnection(connection) });
  // Redis trouble is waited out (ioredis reconnects), told once each way; the lost-job check
  // covers what a Redis without persistence forgets.
  const outage =
    options.onConnection !== undefined ? new RedisOutage(connection, options.onConnection) : null;
  queue.on('error', (error) => outage?.report(error));
  let ends: JobEndReader | null = null;
  let adding: AddingLease | null = null;
  const w = new Waiting<R>(options.onResult);

  try {
    const run = await openRun(queue, keepRunMs, options.newRun === true);
    if (wait) ends = await readEndsInto(queue, w, attempts);
    // Workers told to exit when idle wait while a producer adds (see idle-watch.ts).
    adding = await holdAddingLease(queue, randomUUID());

    const tally = { count: 0, added: 0, alreadyQueued: 0, doneBefore: 0, requeued: 0 };
    /** Sites of the list to walk in full, besides all of them with `options.full`. */
    const full = new Set<string>();
    const data = (site: string): QueueJob => ({
      site,
      run,
      ...(options.full === true || full.has(site) ? { full: true } : {}),
      ...(keepRunMs !== DEFAULT_KEEP_RUN_MS ? { keepRunMs } : {}),
    });
    const jobOptions = {
      attempts,
      backoff: { type: 'exponential', delay: backoffMs },
      removeOnComplete: true,
      removeOnFail: false,
    };
    const flush = (chunk: readonly string[]) => addChunk(queue, run, chunk, data, jobOptions, tally, w, wait);
    const seen = new Set<string>();
    let chunk: string[] = [];
    for await (const job of jobs) {
      const site = typeof job === 'string' ? job : job.site;
      if (seen.has(site)) continue;
      seen.add(site);
      if (typeof job !== 'string' && job.full === true) full.add(site);
      tally.count++;
      chunk.push(site);
      if (chunk.length >= CHUNK) {
        await flush(chunk);
        chunk = [];
      }
    }
    if (chunk.length > 0) await flush(chunk);
    w.enqueueing = false;
    seen.clear();
    full.clear();
    await adding.end();
    adding = null;
    const report: EnqueueReport = {
      run,
      sites: tally.count,
      added: tally.added,
      alreadyQueued: tally.alreadyQueued,
      doneBefore: tally.doneBefore,
      requeued: tally.requeued,
    };
    options.onEnqueued?.(report);
    if (wait && ends !== null) {
      await waitForAll(queue, run, keepRunMs, ends, w, options.signal, options.onActive);
    }
    return { ...report, finished: w.finished, failed: w.failed, lost: w.lost };
  } finally {
    await adding?.end().catch(() => {});
    await ends?.close();
    await queue.close();
    outage?.close();
  }
}

/** The counts of `EnqueueReport` as a list goes in. */
interface Tally {
  count: number;
  added: number;
  alreadyQueued: number;
  doneBefore: number;
  requeued: number;
}

/**
 * Puts one chunk of sites on the queue: a site the run finished is settled with its recorded
 * result, a job that had failed or completed is removed and added afresh, one waiting or active
 * is left as it is; with `wait`, every site of the chunk is pending.
 */
async function addChunk<R>(
  queue: InstanceType<typeof bullmq.Queue<QueueJob, R>>,
  run: string,
  chunk: readonly string[],
  data: (site: string) => QueueJob,
  opts: JobsOptions,
  tally: Tally,
  w: Waiting<R>,
  wait: boolean,
): Promise<void> {
  const ids = chunk.map(siteJobId);
  const found = await lookupJobs(queue, run, ids);
  const fresh: string[] = [];
  for (let i = 0; i < ids.length; i++) {
    const f = found[i];
    if (typeof f === 'object') {
      // Finished earlier in this run: reported, not walked again.
      tally.doneBefore++;
      w.settle({ site: chunk[i], ok: true, result: f.done as R, before: true });
      continue;
    }
    const state = f === 'exists' ? await queue.getJobState(ids[i]) : 'unknown';
    if (state === 'failed' || state === 'completed') {
      // Its copies go to the site's next job, which names them void (see `VOID_FAILED_LUA`).
      if (state === 'failed') await voidFailedCopies(queue, ids[i]);
      await queue.remove(ids[i]);
      if (state === 'failed') tally.requeued++;
      fresh.push(ids[i]);
    } else if (state === 'unknown') fresh.push(ids[i]);
    else tally.alreadyQueued++;
    if (wait) w.pending.add(ids[i]);
  }
  if (fresh.length > 0) {
    await queue.addBulk(
      fresh.map((id) => ({
        name: 'site',
        data: data(siteOfJobId(id)),
        opts: { ...opts, jobId: id },
      })),
    );
    tally.added += fresh.length;
  }
  w.settleEarly(ids);
}

/** Reads the jobs that end (`readJobEnds`) into the wait: a result, or a failure with its tries. */
function readEndsInto<R>(
  queue: InstanceType<typeof bullmq.Queue<QueueJob, R>>,
  w: Waiting<R>,
  attempts: number,
): Promise<JobEndReader> {
  return readJobEnds(queue, READ_ENDS_MS, (end) => {
    const site = siteOfJobId(end.jobId);
    if (end.ok) {
      w.deliver(end.jobId, { site, ok: true, result: end.returnvalue as R });
      return;
    }
    // The event carries no attempt count. A copy the job kept is void before the failure is
    // reported (see `VOID_FAILED_LUA`).
    void voidFailedCopies(queue, end.jobId)
      .catch(() => 0)
      .then(() => queue.getJob(end.jobId))
      .then(
        (job) =>
          w.deliver(end.jobId, {
            site,
            ok: false,
            error: end.failedReason,
            attempts: job?.attemptsMade ?? attempts,
          }),
        () => w.deliver(end.jobId, { site, ok: false, error: end.failedReason, attempts }),
      );
  });
}

/**
 * Waits until every pending site has ended, keeping the run open, and ends as `lost` the jobs
 * that Redis forgot (found when the run's pointer is gone: see `TOUCH_RUN_LUA`).
 */
async function waitForAll<R>(
  queue: QueueKeysAndJobs,
  run: string,
  keepRunMs: number,
  ends: JobEndReader,
  w: Waiting<R>,
  signal: AbortSignal | undefined,
  onActive: ((active: number) => void) | undefined,
): Promise<void> {
  // One listener for the whole wait, not one per wake-up: those piled up on the signal (and
  // Node warned of a listener leak past ten sites).
  const onAbort = () => w.wake?.();
  signal?.addEventListener('abort', onAbort, { once: true });
  let checking = false;
  const check = async () => {
    if (checking) return;
    checking = true;
    try {
      if ((await touchRun(queue, run, keepRunMs)) !== 0) return;
      const ids = [...w.pending];
      const missing: string[] = [];
      for (let i = 0; i < ids.length; i += CHUNK) {
        const part = ids.slice(i, i + CHUNK);
        const found = await lookupJobs(queue, run, part);
        part.forEach((id, k) => {
          const f = found[k];
          if (f === 'absent') missing.push(id);
          // Recorded by its worker after the restart (its job, gone, can no longer complete).
          else if (typeof f === 'object')
            w.deliver(id, { site: siteOfJobId(id), ok: true, result: f.done as R });
        });
      }
      // A job that completed just now is gone too: its end, in the event stream, is read first.
      await ends.readNow();
      for (const id of missing) {
        w.deliver(id, { site: siteOfJobId(id), ok: false, error: LOST_REASON, attempts: 0, lost: true });
      }
    } catch {
      // Redis away: the next check.
    } finally {
      checking = false;
    }
  };
  const timer = setInterval(() => void check(), LOST_CHECK_MS);
  // The progress line's "active": jobs being walked now, which only Redis knows (one LLEN a second).
  const activeTimer =
    onActive === undefined
      ? null
      : setInterval(() => {
          queue.getActiveCount().then(onActive, () => {});
        }, ACTIVE_EVERY_MS);
  try {
    while (w.pending.size > 0 && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        w.wake = resolve;
      });
      w.wake = null;
    }
  } finally {
    clearInterval(timer);
    if (activeTimer !== null) clearInterval(activeTimer);
    signal?.removeEventListener('abort', onAbort);
  }
}

type QueueKeysAndJobs = Parameters<typeof touchRun>[0] & { getActiveCount(): Promise<number> };
