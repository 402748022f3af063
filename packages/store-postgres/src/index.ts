export type { PostgresResultSink } from './postgres-sink.js';
export {
  openPostgresStateStore,
  openPostgresStore,
  type PostgresStore,
  type PostgresStoreOptions,
} from './postgres-store.js';
export { type PageRowFilter, readPageRows } from './read-rows.js';
export { readRunSummary } from './read-run-summary.js';
export { POSTGRES_SCHEMA } from './schema.js';
