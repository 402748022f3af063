export { type BullmqSiteQueueOptions, bullmqSiteQueue } from './bullmq-site-queue.js';
export {
  assertRedisReachable,
  type RedisConnection,
  type RedisConnectionState,
  type RedisReachableOptions,
  RedisUnreachableError,
} from './connection.js';
export { type VoidedCopiesOptions, voidedCopies } from './copy-claims.js';
export { siteJobId, siteOfJobId } from './job-id.js';
export {
  type EnqueueReport,
  type EnqueueResult,
  type EnqueueSitesOptions,
  enqueueSites,
  type SiteOutcome,
} from './producer.js';
export {
  type JobControl,
  JobLockLostError,
  JobReleasedError,
  type QueueWorker,
  type QueueWorkerOptions,
  startQueueWorker,
} from './queue-worker.js';
export { type RedisGateOptions, type RedisPolitenessGate, redisPolitenessGate } from './redis-gate.js';
export { type RedisStateStoreOptions, redisStateStore } from './redis-state-store.js';
export { type RunWorkerOptions, runWorker } from './run-worker.js';
export { DEFAULT_QUEUE_NAME } from './site-queue.js';
