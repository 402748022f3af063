import { randomUUID } from 'node:crypto';
import type { StateStore } from '@usp-ts/batch';
import { OutputError } from '@usp-ts/batch';
import { errorText, InvalidOptionError, rejectUnknownOptions } from '@usp-ts/core';
import { createPool, redactUrl } from './connection.js';
import { type PostgresResultSink, postgresResultSink } from './postgres-sink.js';
import { postgresStateStore, type SharedRun } from './postgres-state.js';
import { prepareSchema, schemaIsCurrent } from './schema.js';

export interface PostgresStoreOptions {
  /**
   * `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`. Left out (or without a password), the
   * standard `PG*` variables and `~/.pgpass` fill in the rest.
   */
  readonly url?: string;
  /**
   * The run the rows belong to. Every worker of one run uses the same name: a site committed
   * twice in a run keeps one copy. Default: a new id (one run per store opened). A site begun
   * with its own run (`sink.begin(site, { run })`, as `runWorker` does with the queue's run) is
   * filed under that one instead.
   */
  readonly runId?: string;
  /**
   * Connections in the pool (default 4): the state reads, the commits with page rows (up to this
   * many at once) and the one text in flight of the commits without (group commit).
   */
  readonly maxConnections?: number;
}

const KNOWN = { url: true, runId: true, maxConnections: true } satisfies Record<
  keyof PostgresStoreOptions,
  true
>;

/** A run's results and the incremental state in one PostgreSQL database (`openPostgresStore`). */
export interface PostgresStore {
  readonly runId: string;
  /** The rows of this run (pass as `sink`). */
  readonly sink: PostgresResultSink;
  /** The state in the same database (pass as `state`): a site's rows and next state commit together. */
  readonly state: StateStore;
  /** Waits for commits in flight, marks the run as ended and closes the connections. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * The state alone (for `usp batch --state postgres://…` with files as output): `close()` ends its
 * connections. Reads the latest version of each site.
 */
export async function openPostgresStateStore(
  options: Omit<PostgresStoreOptions, 'runId'> = {},
): Promise<StateStore> {
  const store = await openPostgresStore(options);
  return Object.assign({}, store.state, { close: () => store.close() });
}

/**
 * Connects, creates or migrates the schema (refusing a newer one with one line), and opens the
 * run `runId` (recorded in `runs` at its first commit; its committed sites are `sink.done`). Throws `OutputError`
 * (code `USP_OUTPUT`) when the database cannot be used.
 */
export async function openPostgresStore(options: PostgresStoreOptions = {}): Promise<PostgresStore> {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionError('options', 'expected an object');
  rejectUnknownOptions(options, KNOWN);
  const max = options.maxConnections ?? 4;
  if (!Number.isInteger(max) || max < 1)
    throw new InvalidOptionError('maxConnections', 'must be an integer >= 1');
  if (options.runId !== undefined && (typeof options.runId !== 'string' || options.runId === '')) {
    throw new InvalidOptionError('runId', 'must be a non-empty string');
  }
  const where = redactUrl(options.url);
  const pool = createPool(options.url, max);
  // An idle connection the server ends (a restart) must not end the process.
  pool.on('error', () => {});
  const runId = options.runId ?? randomUUID();
  const done = new Set<string>();
  try {
    const client = await pool.connect();
    try {
      if (!(await schemaIsCurrent(client))) await prepareSchema(client, where);
      // A run named here is new: nothing of it is done yet.
      if (options.runId !== undefined) {
        const r = await client.query('SELECT site FROM site_rows WHERE run_id = $1', [runId]);
        for (const row of r.rows) done.add(row.site as string);
      }
    } finally {
      client.release();
    }
  } catch (cause) {
    await pool.end().catch(() => {});
    if (cause instanceof OutputError) throw cause;
    throw new OutputError(`cannot use ${where}: ${errorText(cause)}`, where, { cause });
  }
  const shared: SharedRun = {
    runId,
    begun: new Map(),
    committing: new Map(),
    // A run named here is this store's alone; one named by the caller may be shared (workers).
    writtenInOwnRun: options.runId === undefined ? new Set() : null,
  };
  const state = postgresStateStore(pool, shared, where);
  const sink = postgresResultSink(pool, shared, done, where, state);
  let closed = false;
  return {
    runId,
    sink,
    state,
    async close() {
      if (closed) return;
      closed = true;
      try {
        await sink.close();
        await pool.query('UPDATE runs SET ended_at = now() WHERE run_id = $1', [runId]);
      } finally {
        await pool.end();
      }
    },
  };
}
