import { OutputError } from '@usp-ts/batch';
import type pg from 'pg';

/** The schema version this package creates and reads (`usp_schema.version`). */
export const POSTGRES_SCHEMA = 1;

// Version 1. Rows of a run mirror the NDJSON rows (the column names of `@usp-ts/batch`'s
// `PAGE_COLUMNS`, ...); the state keeps, per site, the version saved by the latest run and by the
// run before it (`state_sites.run_id`), so that a second copy of a site in the same run is
// computed against the same state as the first and can replace it (see `postgres-state.ts`).
const V1 = `
CREATE TABLE runs (
  run_id text PRIMARY KEY, started_at timestamptz NOT NULL DEFAULT now(), ended_at timestamptz
);
CREATE TABLE site_rows (
  run_id text NOT NULL, site text NOT NULL, status text NOT NULL, reason text,
  pages integer NOT NULL, sitemaps integer NOT NULL, requests integer NOT NULL,
  not_modified integer NOT NULL, skipped integer NOT NULL, bytes bigint NOT NULL, ms integer NOT NULL,
  copy text, committed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, site)
);
CREATE INDEX site_rows_copy ON site_rows (copy) WHERE copy IS NOT NULL;
CREATE TABLE sitemap_rows (
  run_id text NOT NULL, site text NOT NULL, url text NOT NULL, final_url text, parent text,
  type text NOT NULL, status integer, not_modified boolean NOT NULL, skipped boolean NOT NULL,
  etag text, last_modified text, bytes bigint NOT NULL, pages integer NOT NULL, ms integer NOT NULL,
  change text, reason text
);
CREATE INDEX sitemap_rows_run_site ON sitemap_rows (run_id, site);
CREATE TABLE page_rows (
  run_id text NOT NULL, site text NOT NULL, sitemap text NOT NULL, url text NOT NULL,
  last_modified text, change_frequency text, priority real, change text,
  news_story json, images json, alternates json, extensions json
);
CREATE INDEX page_rows_run_site ON page_rows (run_id, site);
CREATE TABLE void_copies (copy text PRIMARY KEY);
CREATE TABLE state_sites (
  site text NOT NULL, run_id text NOT NULL, seq bigserial NOT NULL,
  walked_at bigint NOT NULL, full_walk_at bigint NOT NULL, probed_at bigint NOT NULL,
  lastmod_trust integer NOT NULL, unreachable jsonb, sitemaps jsonb NOT NULL,
  PRIMARY KEY (site, run_id)
);
CREATE TABLE state_digests (
  site text NOT NULL, run_id text NOT NULL, url text NOT NULL, pages bytea NOT NULL,
  PRIMARY KEY (site, run_id, url)
);
CREATE TABLE run_marks (run_id text PRIMARY KEY, site text NOT NULL, offsets jsonb NOT NULL);
`;

/** Migrations: `MIGRATIONS[v]` takes a database from version v to v + 1 (0: empty). */
const MIGRATIONS: readonly string[] = [V1];

/** One lock number for "the usp schema is being created or migrated" (any constant would do). */
const SCHEMA_LOCK = 0x75737073;

/**
 * Whether the database holds this package's schema version as it is: one statement, then nothing
 * to create or migrate (`prepareSchema`, seven round trips, is for the other cases). A database
 * without the version table is not current.
 */
export async function schemaIsCurrent(client: pg.ClientBase): Promise<boolean> {
  try {
    const r = await client.query('SELECT version FROM usp_schema WHERE id = 1');
    return (r.rows[0] as { version: number } | undefined)?.version === POSTGRES_SCHEMA;
  } catch (error) {
    if ((error as { code?: unknown }).code === UNDEFINED_TABLE) return false;
    throw error;
  }
}

/** PostgreSQL's SQLSTATE of a table that does not exist. */
const UNDEFINED_TABLE = '42P01';

/**
 * Creates the tables on an empty database, migrates an older schema in one transaction, and
 * refuses a newer one (one line: this tool is older than the database). Workers starting at
 * once take turns (an advisory lock).
 */
export async function prepareSchema(client: pg.ClientBase, where: string): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS usp_schema (id integer PRIMARY KEY CHECK (id = 1), version integer NOT NULL)',
    );
    const row = (await client.query('SELECT version FROM usp_schema WHERE id = 1')).rows[0] as
      | { version: number }
      | undefined;
    const version = row?.version ?? 0;
    if (version > POSTGRES_SCHEMA) {
      throw new OutputError(
        `${where} holds usp schema ${version}; this usp reads up to ${POSTGRES_SCHEMA}: upgrade usp`,
        where,
      );
    }
    for (let v = version; v < POSTGRES_SCHEMA; v++) await client.query(MIGRATIONS[v]);
    await client.query(
      `INSERT INTO usp_schema (id, version) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET version = $1`,
      [POSTGRES_SCHEMA],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
