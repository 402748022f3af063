import type { JobLease, QueueConsumer, SiteJob, SiteQueue } from '@usp-ts/batch';
import type { RedisConnection, RedisConnectionState } from './connection.js';
import { pick } from './pick.js';
import { enqueueJobs } from './producer.js';
import { JobReleasedError, startQueueWorker } from './queue-worker.js';

/** Options of `bullmqSiteQueue`: the queue, and how its worker holds its jobs. */
export interface BullmqSiteQueueOptions {
  readonly connection: RedisConnection;
  /** Default `usp-sites`. */
  readonly queueName?: string;
  /** See `startQueueWorker`. Default 30,000 ms. */
  readonly lockDurationMs?: number;
  /** See `startQueueWorker`. Default 30,000 ms. */
  readonly stalledIntervalMs?: number;
  /** The worker's name on its jobs (BullMQ dashboards). */
  readonly name?: string;
  /** See `startQueueWorker`. Default `false`. */
  readonly stopWhenIdle?: boolean;
  /** See `startQueueWorker`. Default 3,000 ms. */
  readonly idleMs?: number;
  /** Called once BullMQ has recorded a site's job as completed, with the site's result. */
  readonly onCompleted?: (result: unknown) => void;
  /** Connection errors and each failed try of a job (see `startQueueWorker`). */
  readonly onError?: (error: Error) => void;
  /** See `startQueueWorker`: Redis went away, once, and came back, once. */
  readonly onConnection?: (state: RedisConnectionState, address: string) => void;
}

/**
 * BullMQ as an adapter of batch's queue port (`SiteQueue`): `enqueue` is `enqueueSites` (one queue opened for the list, the jobs in its order; its run
 * rules: a site the queue's open run finished is not walked again), `consume` a
 * `startQueueWorker` whose lease is BullMQ's lock with this package's copy claims (`confirm`),
 * whose `released` outcome hands the job back, and whose `kept` result BullMQ records and the
 * producer is told.
 */
export function bullmqSiteQueue(options: BullmqSiteQueueOptions): SiteQueue {
  const { connection } = options;
  const queueName = options.queueName !== undefined ? { queueName: options.queueName } : {};
  return {
    async enqueue(jobs) {
      return (await enqueueJobs(jobs, { connection, ...queueName })).added;
    },
    consume(walk, { concurrency }): QueueConsumer {
      return startQueueWorker({
        connection,
        ...queueName,
        concurrency,
        ...pick(options, ['lockDurationMs', 'stalledIntervalMs', 'name', 'stopWhenIdle', 'idleMs']),
        ...pick(options, ['onError', 'onConnection', 'onCompleted']),
        async process(job: SiteJob, control) {
          const lease: JobLease = {
            signal: control.signal,
            confirm: async () => ({ token: control.token, voids: await control.confirm() }),
            ...(control.run !== undefined ? { run: control.run } : {}),
          };
          const outcome = await walk(job, lease);
          if ('released' in outcome) throw new JobReleasedError();
          return outcome.kept;
        },
      });
    },
  };
}
