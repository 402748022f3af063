export { type BackendDriver, type BackendSpec, openBackend, parseBackendSpec } from './backend-spec.js';
export { type BatchWalkOptions, batchWalk } from './batch-walk.js';
export { type MemorySiteQueueOptions, memorySiteQueue } from './memory-queue.js';
export { type MemoryRows, memorySink } from './memory-sink.js';
export { memoryStateStore } from './memory-state-store.js';
export { type NdjsonSink, type NdjsonSinkOptions, openNdjsonSink } from './ndjson-sink.js';
export { OutputError } from './output-error.js';
export { LOCK_FILE, type LockHolder, lockOutput, type OutputLock } from './output-lock.js';
export {
  DEFAULT_MAX_CRAWL_DELAY_MS,
  DEFAULT_PER_HOST,
  type GateRelease,
  type HostGateOptions,
  hostGate,
  type PolitenessGate,
} from './politeness-gate.js';
export {
  type BatchProgress,
  countSite,
  countStatus,
  emptyProgress,
  ProgressCounter,
  type ProgressTally,
  sitesText,
  snapshotProgress,
} from './progress.js';
export {
  type JobLease,
  type QueueConsumer,
  queueWalker,
  type RunSiteQueueOptions,
  runSiteQueue,
  type SiteCopy,
  type SiteQueue,
  type SiteWalker,
  type TryOutcome,
} from './queue-port.js';
export {
  type ColumnValue,
  PAGE_COLUMNS,
  type PageRowFilter,
  pageRowOf,
  pageRowsQuery,
  pageValues,
  SITE_COLUMNS,
  SITEMAP_COLUMNS,
  sitemapRowOf,
  sitemapValues,
  siteValues,
} from './row-columns.js';
export type {
  Change,
  ListedPageRow,
  PageRow,
  RemovedPageRow,
  SitemapRow,
  SiteResult,
  SiteStatus,
} from './rows.js';
export { type JournalContents, type JournalEntry, type JournalHeader, readJournal } from './run-journal.js';
export { type RunSummaryRows, runSummaryQueries } from './run-summary.js';
export {
  DEFAULT_SITE_DEADLINE_MS,
  isCommitFailure,
  type SiteJob,
  type SiteJobContext,
  type SiteWalkOptions,
  walkSite,
} from './site-job.js';
export { countSiteLines, normalizeSite, readSiteLines, type SiteLine } from './site-list.js';
export { internalErrorResult, isRunFailure, unwalkedResult } from './site-results.js';
export {
  checkSiteRunOptions,
  DEFAULT_SITES,
  type SiteRun,
  type SiteRunOptions,
  siteJobContext,
} from './site-run.js';
export type { BeginOptions, CommitOptions, SiteOutput, SiteSink } from './site-sink.js';
export { START_FIRST_LOOK_AHEAD, startFirst } from './start-first.js';
export {
  type RunMark,
  type SitemapState,
  type SiteState,
  type StateStore,
  StateStoreError,
  type StateStoreProblem,
  type StoredChild,
  type UnreachableMark,
} from './state-store.js';
export { TextPieces, type TextPiecesOptions } from './text-pieces.js';
export { type UnchangedBlock, UnchangedBlocks } from './unchanged-blocks.js';
export { DEFAULT_PROBE_TIMEOUT_MS } from './unreachable-probe.js';
export { WaiterQueue } from './waiter-queue.js';
