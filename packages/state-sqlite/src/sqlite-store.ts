import type { StateStore } from '@usp-ts/batch';
import {
  type CloseRunOptions,
  prepareResults,
  type SqliteResultSink,
  sqliteResultSink,
} from './sqlite-results.js';
import { openStateDatabase, type SqliteStateStoreOptions, stateStoreOn } from './sqlite-state-store.js';

export interface SqliteStoreOptions extends SqliteStateStoreOptions {
  /** Go on with the last run the file holds that did not end (see `SqliteResultSink.done`). */
  readonly resume?: boolean;
}

/** A run's results and its incremental state in one SQLite file (`openSqliteStore`). */
export interface SqliteStore {
  readonly runId: string;
  /** The rows of this run (pass as `sink`). */
  readonly sink: SqliteResultSink;
  /** The state in the same file (pass as `state`): a site's rows and its next state commit together. */
  readonly state: StateStore;
  /**
   * Ends the run (waits for commits in flight) and closes the file; `ended: false` leaves the run
   * unfinished, for `resume` (a run stopped before its end). Safe to call twice.
   */
  close(options?: CloseRunOptions): Promise<void>;
}

/**
 * Opens `path` (created when missing) as a results store: the tables of `sqliteStateStore` and
 * those of the run's rows (`runs`, `site_rows`, `sitemap_rows`, `page_rows`), WAL, locked by this
 * process while it is open: a second writer fails at once with a `locked` `StateStoreError`.
 * Each site commits its rows and its next state in one transaction, so a killed run resumes
 * exactly (`resume`) with no journal.
 */
export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): SqliteStore {
  const db = openStateDatabase(
    path,
    options.busyTimeoutMs !== undefined ? { busyTimeoutMs: options.busyTimeoutMs } : {},
  );
  // The state's own close() leaves the file to the store: the sink may still be committing.
  const state = stateStoreOn(db, path, () => {});
  let sink: SqliteResultSink;
  try {
    prepareResults(db, path);
    sink = sqliteResultSink(db, path, {
      ownState: state,
      ...(options.resume !== undefined ? { resume: options.resume } : {}),
    });
  } catch (error) {
    db.close();
    throw error;
  }
  let closed = false;
  const close = async (options?: CloseRunOptions): Promise<void> => {
    if (closed) return;
    closed = true;
    try {
      await sink.close(options);
    } finally {
      db.close();
    }
  };
  return { runId: sink.runId, sink, state, close };
}
