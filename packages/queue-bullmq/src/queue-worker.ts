import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { SiteJob } from '@usp-ts/batch';
import { InvalidOptionError, rejectUnknownOptions, UspError } from '@usp-ts/core';
import type { Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { bullmq } from './cjs-deps.js';
import {
  bullConnection,
  checkConnection,
  type RedisConnection,
  type RedisConnectionState,
  RedisOutage,
} from './connection.js';
import { CARRIED_KEY, CLAIM_COPY_LUA, VOIDED_KEY, VOIDED_TTL_MS, voidFailedCopies } from './copy-claims.js';
import { queueDrained } from './idle-watch.js';
import { invalidJobReason, type QueueJob } from './job-data.js';
import { DEFAULT_KEEP_RUN_MS, doneInRun, recordDone } from './runs.js';
import { checkQueueName, DEFAULT_QUEUE_NAME } from './site-queue.js';

/** How often an idle worker with `stopWhenIdle` looks at the queue. */
const IDLE_POLL_MS = 500;

/** Thrown by a processor to put its job back in the queue untouched (it is walked again from the start). */
export class JobReleasedError extends UspError {
  declare readonly code: 'USP_JOB_RELEASED';
  constructor() {
    super('USP_JOB_RELEASED', 'job released: the worker is stopping');
    this.name = 'JobReleasedError';
  }
}

/** Another worker owns the job now (this one stalled past its lock): its output must not be kept. */
export class JobLockLostError extends UspError {
  declare readonly code: 'USP_JOB_LOCK_LOST';
  readonly jobId: string;
  constructor(jobId: string) {
    super('USP_JOB_LOCK_LOST', `job ${jobId}: lock lost, another worker has taken the site over`);
    this.jobId = jobId;
    this.name = 'JobLockLostError';
  }
}

/** What a processor gets besides the job's data. */
export interface JobControl {
  /** Aborted when the worker stops: end the walk, keep nothing, and throw `JobReleasedError`. */
  readonly signal: AbortSignal;
  /**
   * Renews this worker's lock on the job, or rejects with `JobLockLostError` when another worker
   * took the job over. Call it right before keeping any output, so a worker that stalled and
   * lost its job never writes a second copy of a site. It also records `token` as the job's
   * copy, and resolves with the tokens of earlier tries' copies that this one makes void (their
   * worker was killed after keeping them, before the job was recorded as done): keep the list
   * with the output (the NDJSON sink's journal does), so a reader can drop those copies.
   */
  confirm(): Promise<readonly string[]>;
  /**
   * The name of the copy of the output this try keeps: a fresh id for each try. Not BullMQ's lock
   * token, which a worker hands on to the next job it takes after completing one: a copy named by
   * it would share its name with the other sites of that slot, and voiding it would void them too.
   */
  readonly token: string;
  /** 1 on the first try, 2 on the first retry, … */
  readonly attempt: number;
  /**
   * The run the job belongs to (see "Runs" in the README), named by its producer and the same for
   * every worker: a store that keeps rows by run files the site's rows under it
   * (`SiteSink.begin(site, { run })`). Absent for a job added without one.
   */
  readonly run?: string;
}

/** Options of `startQueueWorker`. */
export interface QueueWorkerOptions<R> {
  readonly connection: RedisConnection;
  /** Default `usp-sites`. */
  readonly queueName?: string;
  /** Sites walked at once by this worker. Default 16. */
  readonly concurrency?: number;
  /**
   * How long this worker's hold on a job lasts without renewal (renewed every half of it). A
   * worker killed with -9 has its jobs walked again by another this long after at most, plus
   * `stalledIntervalMs`. Default 30,000 ms.
   */
  readonly lockDurationMs?: number;
  /** How often this worker looks for stalled jobs of dead workers. Default 30,000 ms. */
  readonly stalledIntervalMs?: number;
  /** Times a job may stall (its worker died) and be walked again before it fails. Default 1. */
  readonly maxStalledCount?: number;
  /** This worker's name, stored on the jobs it takes (shown by BullMQ dashboards). */
  readonly name?: string;
  /**
   * Stop on its own once the queue is drained (for scripts and benchmarks; a long-lived worker
   * waits for more): nothing waiting, delayed or active on any worker, and no producer adding jobs
   * (`enqueueSites` holds a lease while it adds), for `idleMs` in a row. A job of a worker that
   * died is taken over first. Default `false`.
   */
  readonly stopWhenIdle?: boolean;
  /** With `stopWhenIdle`: how long the queue must stay drained. Default 3,000 ms. */
  readonly idleMs?: number;
  /** Walks one site. Its result goes back to the producer through BullMQ. */
  readonly process: (job: SiteJob, control: JobControl) => Promise<R>;
  /** Called once BullMQ has recorded a job as completed, with the processor's result. */
  readonly onCompleted?: (result: R) => void;
  /** Connection errors (Redis gone for a moment; see `onConnection`) and each failed try of a job (to log, or to stop on). */
  readonly onError?: (error: Error) => void;
  /**
   * Told once when Redis goes away (`'away'`, with its `HOST:PORT`) and once when it is back, instead
   * of a connection error per client and reconnect attempt to `onError`. Default: those go to `onError`.
   */
  readonly onConnection?: (state: RedisConnectionState, address: string) => void;
}

const OPTION_KEYS = {
  connection: true,
  queueName: true,
  concurrency: true,
  lockDurationMs: true,
  stalledIntervalMs: true,
  maxStalledCount: true,
  name: true,
  stopWhenIdle: true,
  idleMs: true,
  process: true,
  onCompleted: true,
  onError: true,
  onConnection: true,
} satisfies Record<keyof QueueWorkerOptions<unknown>, true>;

/** A running worker. */
export interface QueueWorker {
  /** Stops taking jobs, releases the running ones back to the queue and closes. Safe to call twice. */
  stop(): Promise<void>;
  /** Resolves once the worker has closed. */
  readonly closed: Promise<void>;
}

function positiveInt(name: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min) return value;
  throw new InvalidOptionError(name, `expected an integer >= ${min}, got ${String(value)}`);
}

/**
 * Takes site jobs off the queue, `concurrency` at a time, and runs `process` on each: the BullMQ
 * side of a worker, kept apart from what a job does. Failed jobs are retried by BullMQ as the
 * producer asked; jobs of a worker that died are taken over after its lock expires.
 */
export function startQueueWorker<R>(options: QueueWorkerOptions<R>): QueueWorker {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionError('options', 'expected an object');
  rejectUnknownOptions(options, OPTION_KEYS);
  const connection = checkConnection(options.connection);
  const queueName = checkQueueName(options.queueName ?? DEFAULT_QUEUE_NAME);
  const concurrency = positiveInt('concurrency', options.concurrency, 16, 1);
  const lockDurationMs = positiveInt('lockDurationMs', options.lockDurationMs, 30_000, 100);
  const stalledIntervalMs = positiveInt('stalledIntervalMs', options.stalledIntervalMs, 30_000, 100);
  const maxStalledCount = positiveInt('maxStalledCount', options.maxStalledCount, 1, 0);
  const idleMs = positiveInt('idleMs', options.idleMs, 3_000, 0);
  if (typeof options.process !== 'function') throw new InvalidOptionError('process', 'expected a function');
  const outage =
    options.onConnection !== undefined ? new RedisOutage(connection, options.onConnection) : null;
  const userOnError = options.onError ?? (() => {});
  const onError = (error: Error) => {
    if (outage === null || !outage.report(error)) userOnError(error);
  };

  const stopping = new AbortController();
  // Every walk listens on it once per request in flight: many, by design.
  setMaxListeners(0, stopping.signal);
  let running = 0;
  let worker: Worker<QueueJob, R> | null = null;
  let claimClient: Promise<Redis> | null = null;
  const claimCopy = async (job: Job<QueueJob, R>, token: string, copy: string): Promise<string[] | null> => {
    const w = worker!;
    claimClient ??= (w.getBackend().client as unknown as Promise<Redis>).then((client) => {
      if (!('uspClaimCopy' in client))
        client.defineCommand('uspClaimCopy', { numberOfKeys: 5, lua: CLAIM_COPY_LUA });
      return client;
    });
    const client = (await claimClient) as Redis & {
      uspClaimCopy(...args: (string | number)[]): Promise<string | null>;
    };
    const id = job.id ?? '';
    const voids = await client.uspClaimCopy(
      `${w.toKey(id)}:lock`,
      w.keys.stalled,
      w.toKey(id),
      w.toKey(VOIDED_KEY),
      w.toKey(CARRIED_KEY),
      token,
      lockDurationMs,
      id,
      VOIDED_TTL_MS,
      copy,
    );
    if (voids === null) return null;
    return voids === '' ? [] : voids.split(' ');
  };
  // Two parameters, not BullMQ's third (a per-job signal, aborted only by `cancelJob`, which this
  // worker never calls): BullMQ makes that signal's controller only for a processor that takes it,
  // and a controller, a combined signal and its listener limit per job were a tenth of BullMQ's
  // own CPU per job (bench:queue's floor).
  const replayed = new Set<string>();
  const processor = async (job: Job<QueueJob, R>, token?: string): Promise<R> => {
    const signal = stopping.signal;
    const copy = randomUUID();
    const control: JobControl = {
      signal,
      attempt: job.attemptsMade + 1,
      token: copy,
      ...(typeof job.data?.run === 'string' ? { run: job.data.run } : {}),
      async confirm() {
        if (token === undefined) return [];
        let voids: string[] | null = null;
        try {
          voids = await claimCopy(job, token, copy);
        } catch {
          voids = null;
        }
        if (voids === null) throw new JobLockLostError(job.id ?? '?');
        return voids;
      },
    };
    const id = job.id ?? '';
    // Not ours (added by other code): fails at once, never retried, never walked.
    const invalid = invalidJobReason(job.data);
    if (invalid !== null) throw new bullmq.UnrecoverableError(invalid);
    const data = job.data;
    if (signal.aborted && token !== undefined) {
      // Taken while this worker stops: the wake-up that the release of a running job sends can reach
      // one of this worker's own blocked fetches before BullMQ sees it is closing, and hand that job
      // straight back. Its walk would start on a signal already aborted, one whose abort event never
      // comes; so it goes back to the queue, untouched, for another worker.
      await job.moveToWait(token);
      throw new bullmq.WaitingError();
    }
    running++;
    try {
      if (data.run !== undefined) {
        // Finished earlier in its run (this job was added in a race with the first one's end, or
        // its worker was killed after recording it): the recorded result, not a second walk.
        const before = await doneInRun(worker!, data.run, id);
        if (before !== undefined) {
          replayed.add(id);
          return before as R;
        }
      }
      const result = await options.process(data, control);
      if (data.run !== undefined) {
        await recordDone(worker!, data.run, id, result, data.keepRunMs ?? DEFAULT_KEEP_RUN_MS);
      }
      return result;
    } catch (error) {
      if (error instanceof JobReleasedError && token !== undefined) {
        await job.moveToWait(token);
        // Tells BullMQ the job moved on its own: neither completed nor failed.
        throw new bullmq.WaitingError();
      }
      throw error;
    } finally {
      running--;
    }
  };

  worker = new bullmq.Worker<QueueJob, R>(queueName, processor, {
    connection: bullConnection(connection),
    concurrency,
    lockDuration: lockDurationMs,
    stalledInterval: stalledIntervalMs,
    maxStalledCount,
    ...(options.name !== undefined ? { name: options.name } : {}),
  });
  worker.on('error', (error) => onError(error));
  // A job out of tries (or stalled too often) keeps no copy (see `VOID_FAILED_LUA`); a stopping
  // worker finishes these before it closes its connection.
  const voiding = new Set<Promise<unknown>>();
  worker.on('failed', (job, error) => {
    onError(error);
    if (job?.id === undefined) return;
    const done = voidFailedCopies(worker!, job.id)
      .catch((e: unknown) => onError(e as Error))
      .finally(() => voiding.delete(done));
    voiding.add(done);
  });
  const onCompleted = options.onCompleted;
  worker.on('completed', (job) => {
    // A replayed result is the site's walk in another job: told once, by that job.
    if (!replayed.delete(job.id ?? '')) onCompleted?.(job.returnvalue);
  });

  let closing: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    if (closing !== null) return closing;
    stopping.abort(new JobReleasedError());
    closing = Promise.all(voiding).then(() => worker!.close());
    return closing;
  };
  const closed = new Promise<void>((resolve) => worker.once('closed', () => resolve()));
  void closed.then(() => outage?.close());
  if (options.stopWhenIdle === true) {
    // See idle-watch.ts: drained means nothing waiting, delayed or active anywhere and no producer
    // adding, for `idleMs` in a row. The worker then closes as BullMQ closes (a job it has just
    // taken is walked to the end), not as `stop()` does (which would hand that job back).
    const queue = new bullmq.Queue(queueName, { connection: bullConnection(connection) });
    queue.on('error', (error) => {
      // Redis gone for a moment: reported once; the next check retries.
      outage?.report(error);
    });
    let idleSince: number | null = null;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const check = async () => {
      timer = null;
      if (closing !== null) return;
      try {
        const drained = running === 0 && (await queueDrained(queue));
        if (!drained || running > 0) idleSince = null;
        else if (idleSince === null) idleSince = performance.now();
        else if (performance.now() - idleSince >= idleMs && closing === null) {
          closing = Promise.all(voiding).then(() => worker!.close());
          return;
        }
      } catch (error) {
        idleSince = null;
        onError(error as Error);
      }
      if (closing === null) timer = setTimeout(() => void check(), Math.min(IDLE_POLL_MS, idleMs));
    };
    timer = setTimeout(() => void check(), 0);
    void closed.then(() => {
      if (timer !== null) clearTimeout(timer);
      return queue.close();
    });
  }
  return { stop, closed };
}
