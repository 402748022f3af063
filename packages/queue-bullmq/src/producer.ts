import { randomUUID } from 'node:crypto';
import type { SiteJob } from '@usp-ts/batch';
import { InvalidOptionError, rejectUnknownOptions } from '@usp-ts/core';
import type { Redis } from 'ioredis';
import { bullmq } from './cjs-deps.js';
import { assertRedisReachable, bullConnection, checkConnection, type RedisConnection } from './connection.js';
import { voidFailedCopies } from './copy-claims.js';
import { type AddingLease, holdAddingLease } from './idle-watch.js';
import { type JobEndReader, readJobEnds } from './job-ends.js';
import { siteJobId, siteOfJobId } from './job-id.js';
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
}

/** How the list went into the queue. */
export interface EnqueueReport {
  /** Sites in the list (each once). */
  readonly sites: number;
  /** Jobs added. */
  readonly added: number;
  /** Sites already waiting or being walked (enqueued by an earlier call): not added again. */
  readonly alreadyQueued: number;
  /** Sites whose job had failed for good earlier: that job was removed and the site enqueued again. */
  readonly requeued: number;
}

/** How one site of the list ended. */
export type SiteOutcome<R = unknown> =
  | { readonly site: string; readonly ok: true; readonly result: R }
  | { readonly site: string; readonly ok: false; readonly error: string; readonly attempts: number };

/** The end of a waiting `enqueueSites`. */
export interface EnqueueResult extends EnqueueReport {
  /** Sites that finished (walked or failed); equals `sites` unless the wait was aborted. */
  readonly finished: number;
  /** Jobs that failed for good, with their last error: what the summary lists. */
  readonly failed: readonly { readonly site: string; readonly error: string; readonly attempts: number }[];
}

const OPTION_KEYS = {
  connection: true,
  queueName: true,
  attempts: true,
  backoffMs: true,
  full: true,
  wait: true,
  onEnqueued: true,
  onResult: true,
  signal: true,
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
 * KEYS: job hashes. Returns 1 for each that exists, else 0: one round trip for a chunk, where
 * BullMQ's `getJobState` is one script call per job, and a site enqueued for the first time
 * (most of them) has no job at all.
 */
const JOBS_EXIST_LUA = `
local out = {}
for i = 1, #KEYS do out[i] = redis.call('EXISTS', KEYS[i]) end
return out
`;

function positiveInt(name: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min) return value;
  throw new InvalidOptionError(name, `expected an integer >= ${min}, got ${String(value)}`);
}

/**
 * Puts one job per site on the queue, its id the site (normalised homepage: pass sites as the
 * batch's site list gives them), so a site already waiting or being walked is not added twice.
 * Completed jobs are removed once their result is published, so the next run enqueues the site
 * again; a job that had failed for good is removed and enqueued afresh.
 *
 * With `wait`, reads the jobs that end from before the first job is added (in batches, every
 * 500 ms) and returns once every site of the list has finished; each worker's result reaches
 * `onResult`.
 *
 * A connection given as a URL is checked with one PING first: a Redis that does not answer
 * within 5 s rejects with `RedisUnreachableError` (code `USP_CONNECTION`) instead of retrying
 * for ever. Once the run has started, a Redis restart is waited out.
 */
export async function enqueueSites<R = unknown>(
  sites: Iterable<string> | AsyncIterable<string>,
  options: EnqueueSitesOptions<R>,
): Promise<EnqueueResult> {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionError('options', 'expected an object');
  rejectUnknownOptions(options, OPTION_KEYS);
  const connection = checkConnection(options.connection);
  const queueName = checkQueueName(options.queueName ?? DEFAULT_QUEUE_NAME);
  const attempts = positiveInt('attempts', options.attempts, 3, 1);
  const backoffMs = positiveInt('backoffMs', options.backoffMs, 10_000, 0);
  const wait = options.wait === true;
  await assertRedisReachable(connection, options.signal !== undefined ? { signal: options.signal } : {});

  const queue = new bullmq.Queue<SiteJob, R>(queueName, { connection: bullConnection(connection) });
  let ends: JobEndReader | null = null;
  let adding: AddingLease | null = null;
  const pending = new Set<string>();
  const failed: { site: string; error: string; attempts: number }[] = [];
  let finished = 0;
  let wake: (() => void) | null = null;
  const settle = (outcome: SiteOutcome<R>) => {
    finished++;
    if (!outcome.ok) failed.push({ site: outcome.site, error: outcome.error, attempts: outcome.attempts });
    options.onResult?.(outcome);
    wake?.();
  };
  // A job found waiting or active may finish between the existence check and `pending.add`: ends
  // of jobs not yet pending are kept until the chunk they belong to is settled, then dropped.
  const early = new Map<string, SiteOutcome<R>>();
  let enqueueing = true;
  const deliver = (jobId: string, outcome: SiteOutcome<R>) => {
    if (pending.delete(jobId)) settle(outcome);
    else if (enqueueing) early.set(jobId, outcome);
  };

  try {
    const redis = (await queue.getBackend().client) as unknown as Redis;
    if (!('uspJobsExist' in redis)) redis.defineCommand('uspJobsExist', { lua: JOBS_EXIST_LUA });
    const client = redis as Redis & { uspJobsExist(keys: number, ...names: string[]): Promise<number[]> };
    // Workers told to exit when idle wait while a producer adds (see idle-watch.ts).
    adding = await holdAddingLease(queue, randomUUID());
    if (wait) {
      ends = await readJobEnds(queue, READ_ENDS_MS, (end) => {
        const site = siteOfJobId(end.jobId);
        if (end.ok) {
          deliver(end.jobId, { site, ok: true, result: end.returnvalue as R });
          return;
        }
        // The event carries no attempt count. A copy the job kept is void before the failure is
        // reported (see `VOID_FAILED_LUA`).
        void voidFailedCopies(queue, end.jobId)
          .catch(() => 0)
          .then(() => queue.getJob(end.jobId))
          .then(
            (job) =>
              deliver(end.jobId, {
                site,
                ok: false,
                error: end.failedReason,
                attempts: job?.attemptsMade ?? attempts,
              }),
            () => deliver(end.jobId, { site, ok: false, error: end.failedReason, attempts }),
          );
      });
    }

    let count = 0;
    let added = 0;
    let alreadyQueued = 0;
    let requeued = 0;
    const seen = new Set<string>();
    let chunk: string[] = [];
    const flush = async () => {
      const ids = chunk.map(siteJobId);
      chunk = [];
      const exist = await client.uspJobsExist(ids.length, ...ids.map((id) => queue.toKey(id)));
      const states = await Promise.all(
        ids.map((id, i) => (exist[i] === 1 ? queue.getJobState(id) : ('unknown' as const))),
      );
      const fresh: string[] = [];
      for (let i = 0; i < ids.length; i++) {
        const state = states[i];
        if (state === 'failed' || state === 'completed') {
          // Its copies go to the site's next job, which names them void (see `VOID_FAILED_LUA`).
          if (state === 'failed') await voidFailedCopies(queue, ids[i]);
          await queue.remove(ids[i]);
          if (state === 'failed') requeued++;
          fresh.push(ids[i]);
        } else if (state === 'unknown') fresh.push(ids[i]);
        else alreadyQueued++;
        if (wait) pending.add(ids[i]);
      }
      if (fresh.length > 0) {
        await queue.addBulk(
          fresh.map((id) => ({
            name: 'site',
            data: { site: siteOfJobId(id), ...(options.full === true ? { full: true } : {}) },
            opts: {
              jobId: id,
              attempts,
              backoff: { type: 'exponential', delay: backoffMs },
              removeOnComplete: true,
              removeOnFail: false,
            },
          })),
        );
        added += fresh.length;
      }
      for (const id of ids) {
        const outcome = early.get(id);
        if (outcome !== undefined && pending.delete(id)) settle(outcome);
      }
      early.clear();
    };
    for await (const site of sites) {
      if (seen.has(site)) continue;
      seen.add(site);
      count++;
      chunk.push(site);
      if (chunk.length >= CHUNK) await flush();
    }
    if (chunk.length > 0) await flush();
    enqueueing = false;
    await adding.end();
    adding = null;
    seen.clear();
    const report: EnqueueReport = { sites: count, added, alreadyQueued, requeued };
    options.onEnqueued?.(report);

    if (wait) {
      const signal = options.signal;
      // One listener for the whole wait, not one per wake-up: those piled up on the signal (and
      // Node warned of a listener leak past ten sites).
      const onAbort = () => wake?.();
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        while (pending.size > 0 && !signal?.aborted) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = null;
        }
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
    }
    return { ...report, finished, failed };
  } finally {
    await adding?.end().catch(() => {});
    await ends?.close();
    await queue.close();
  }
}
