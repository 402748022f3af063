export { readSqlitePageRows } from './read-rows.js';
export { readSqliteRunSummary } from './read-run-summary.js';
export {
  type CloseRunOptions,
  RESULTS_SCHEMA,
  type SqliteResultSink,
  type SqliteResultsOptions,
} from './sqlite-results.js';
export { type SqliteStateStoreOptions, sqliteStateStore } from './sqlite-state-store.js';
export { openSqliteStore, type SqliteStore, type SqliteStoreOptions } from './sqlite-store.js';
