import { OutputError } from '@usp-ts/batch';
import type pg from 'pg';

/** The schema version this package creates and reads (`usp_schema.version`). */
export const POSTGRES_SCHEMA = 6;

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

// Version 2: a state version shares the digest rows of the sitemaps it kept (a 304, a skip) with
// the version it was computed from, instead of a copy of each (on a run where little changed, the
// copy was the largest part of the server's work). A digest row is keyed by the `seq` of the
// version that wrote it; `state_sites.digests_from` maps a kept sitemap's URL to the `seq` whose row
// it shares (a URL not in it: the version's own row, if any). A row goes when no version refers
// to it. The migration keys each v1 row by its version's seq (rows of no version go).
//
// A version is saved by one function, `usp_save_state`: PL/pgSQL keeps its statements' plans for
// the session, where the same statements sent as text with literals were planned at every save
// (on a run where little changed, planning was half of the server's statement time).
//   Two versions a site: this one and the one it was computed from (f, `p_from`, or the latest
// when `p_from_latest`); the others go. A digest row of the site stays while f stays and refers to
// it, or this version keeps its URL (`p_keep`) from f; this version's own rows (`p_urls`,
// `p_pages`) are new rows under its new seq, so a row is never overwritten.
const V2 = `
ALTER TABLE state_sites ADD COLUMN digests_from jsonb NOT NULL DEFAULT '{}';
ALTER TABLE state_digests ADD COLUMN seq bigint;
UPDATE state_digests d SET seq = v.seq FROM state_sites v WHERE v.site = d.site AND v.run_id = d.run_id;
DELETE FROM state_digests WHERE seq IS NULL;
ALTER TABLE state_digests DROP CONSTRAINT state_digests_pkey, DROP COLUMN run_id,
  ALTER COLUMN seq SET NOT NULL, ADD PRIMARY KEY (site, seq, url);
CREATE FUNCTION usp_save_state(
  p_site text, p_run text, p_from text, p_from_latest boolean, p_walked_at bigint, p_full_walk_at bigint,
  p_probed_at bigint, p_lastmod_trust integer, p_unreachable jsonb, p_sitemaps jsonb, p_keep text[],
  p_urls text[], p_pages bytea[], p_mark_run text, p_mark_offsets jsonb
) RETURNS void LANGUAGE plpgsql AS $usp$
DECLARE
  v_from text := p_from;
BEGIN
  IF p_from_latest THEN
    SELECT run_id INTO v_from FROM state_sites WHERE site = p_site ORDER BY seq DESC LIMIT 1;
  END IF;
  IF p_mark_run IS NOT NULL THEN
    INSERT INTO run_marks (run_id, site, offsets) VALUES (p_mark_run, p_site, p_mark_offsets)
      ON CONFLICT (run_id) DO UPDATE SET site = excluded.site, offsets = excluded.offsets;
  END IF;
  WITH f AS (SELECT seq, digests_from FROM state_sites WHERE site = p_site AND run_id = v_from),
    g AS (DELETE FROM state_digests d WHERE d.site = p_site AND NOT EXISTS (SELECT 1 FROM f
      WHERE coalesce((f.digests_from ->> d.url)::bigint, f.seq) = d.seq
        AND (v_from IS DISTINCT FROM p_run OR d.url = ANY(p_keep)))),
    o AS (DELETE FROM state_sites WHERE site = p_site AND run_id <> p_run AND run_id IS DISTINCT FROM v_from),
    v AS (INSERT INTO state_sites AS s (site, run_id, walked_at, full_walk_at, probed_at, lastmod_trust,
        unreachable, sitemaps, digests_from)
      VALUES (p_site, p_run, p_walked_at, p_full_walk_at, p_probed_at, p_lastmod_trust, p_unreachable, p_sitemaps,
        (SELECT coalesce(jsonb_object_agg(u, coalesce(f.digests_from -> u, to_jsonb(f.seq))), '{}')
         FROM f, unnest(p_keep) u))
      ON CONFLICT (site, run_id) DO UPDATE SET seq = nextval(pg_get_serial_sequence('state_sites', 'seq')),
        walked_at = excluded.walked_at, full_walk_at = excluded.full_walk_at, probed_at = excluded.probed_at,
        lastmod_trust = excluded.lastmod_trust, unreachable = excluded.unreachable, sitemaps = excluded.sitemaps,
        digests_from = excluded.digests_from
      RETURNING s.seq)
  INSERT INTO state_digests (site, seq, url, pages)
  SELECT p_site, v.seq, x.url, x.pages FROM v, unnest(p_urls, p_pages) x(url, pages);
END
$usp$;
`;

// Version 3: a page row's run and site default to the transaction's settings `usp.run_id` and
// `usp.site`, which a site's commit sets before its COPY: the COPY lines then leave out two
// values that are the same in every line of a commit (the run's id alone was ~18 % of their
// bytes). Unset, they are NULL, which the columns refuse.
const V3 = `
ALTER TABLE page_rows
  ALTER COLUMN run_id SET DEFAULT nullif(current_setting('usp.run_id', true), ''),
  ALTER COLUMN site SET DEFAULT nullif(current_setting('usp.site', true), '');
`;

// Version 4: a page row names its run and site by an integer key, `site_runs.id`, instead of the
// two texts: the rows go to `page_data`, keyed and indexed by `site_run`, which a site's commit
// sets (the setting `usp.site_run`, the column's default) before its COPY. The index on (run_id,
// site), two texts of ~60 bytes a row, was about 40 % of the server's CPU in a run that rewrote
// 500,000 rows (perf); an index on one bigint costs a third of it, and each row is ~60 bytes
// smaller. `page_rows` stays, as a view with the columns it had, for every reader and user query:
// a filter on its run_id or site finds the keys in `site_runs` (unique on them) and the rows by
// the index. The migration rewrites the page rows once.
const V4 = `
CREATE TABLE site_runs (id bigserial PRIMARY KEY, run_id text NOT NULL, site text NOT NULL, UNIQUE (run_id, site));
INSERT INTO site_runs (run_id, site) SELECT DISTINCT run_id, site FROM page_rows ORDER BY run_id, site;
CREATE TABLE page_data (
  site_run bigint NOT NULL DEFAULT nullif(current_setting('usp.site_run', true), '')::bigint,
  sitemap text NOT NULL, url text NOT NULL, last_modified text, change_frequency text, priority real,
  change text, news_story json, images json, alternates json, extensions json
);
INSERT INTO page_data
  SELECT k.id, p.sitemap, p.url, p.last_modified, p.change_frequency, p.priority, p.change, p.news_story,
    p.images, p.alternates, p.extensions
  FROM page_rows p JOIN site_runs k ON k.run_id = p.run_id AND k.site = p.site;
DROP TABLE page_rows;
CREATE INDEX page_data_site_run ON page_data (site_run);
CREATE VIEW page_rows AS
  SELECT k.run_id, k.site, p.sitemap, p.url, p.last_modified, p.change_frequency, p.priority, p.change,
    p.news_story, p.images, p.alternates, p.extensions
  FROM page_data p JOIN site_runs k ON k.id = p.site_run;
CREATE FUNCTION usp_site_run(p_run text, p_site text) RETURNS bigint LANGUAGE plpgsql AS $usp$
DECLARE
  v bigint;
BEGIN
  SELECT id INTO v FROM site_runs WHERE run_id = p_run AND site = p_site;
  IF v IS NULL THEN
    INSERT INTO site_runs (run_id, site) VALUES (p_run, p_site)
      ON CONFLICT (run_id, site) DO UPDATE SET site = excluded.site RETURNING id INTO v;
  END IF;
  RETURN v;
END
$usp$;
`;

// Version 5: a state version's digests go by a binary COPY into `state_digests` after
// `usp_save_state`, which sets the version's seq as the transaction's `usp.digest_seq`, the
// column's default (unset, NULL, which the column refuses); the function no longer takes them.
// As literals in the statement's text (base64 up to 64 KiB, a statement of its own above), the
// digests of a run where most sitemaps changed (27 MB) were encoded and copied several times by
// the client and read by the server's parser. Digests do not compress: stored without trying.
const V5 = `
ALTER TABLE state_digests
  ALTER COLUMN seq SET DEFAULT nullif(current_setting('usp.digest_seq', true), '')::bigint,
  ALTER COLUMN pages SET STORAGE EXTERNAL;
DROP FUNCTION usp_save_state(text, text, text, boolean, bigint, bigint, bigint, integer, jsonb, jsonb, text[],
  text[], bytea[], text, jsonb);
CREATE FUNCTION usp_save_state(
  p_site text, p_run text, p_from text, p_from_latest boolean, p_walked_at bigint, p_full_walk_at bigint,
  p_probed_at bigint, p_lastmod_trust integer, p_unreachable jsonb, p_sitemaps jsonb, p_keep text[],
  p_mark_run text, p_mark_offsets jsonb
) RETURNS void LANGUAGE plpgsql AS $usp$
DECLARE
  v_from text := p_from;
  v_seq bigint;
BEGIN
  IF p_from_latest THEN
    SELECT run_id INTO v_from FROM state_sites WHERE site = p_site ORDER BY seq DESC LIMIT 1;
  END IF;
  IF p_mark_run IS NOT NULL THEN
    INSERT INTO run_marks (run_id, site, offsets) VALUES (p_mark_run, p_site, p_mark_offsets)
      ON CONFLICT (run_id) DO UPDATE SET site = excluded.site, offsets = excluded.offsets;
  END IF;
  WITH f AS (SELECT seq, digests_from FROM state_sites WHERE site = p_site AND run_id = v_from),
    g AS (DELETE FROM state_digests d WHERE d.site = p_site AND NOT EXISTS (SELECT 1 FROM f
      WHERE coalesce((f.digests_from ->> d.url)::bigint, f.seq) = d.seq
        AND (v_from IS DISTINCT FROM p_run OR d.url = ANY(p_keep)))),
    o AS (DELETE FROM state_sites WHERE site = p_site AND run_id <> p_run AND run_id IS DISTINCT FROM v_from),
    v AS (INSERT INTO state_sites AS s (site, run_id, walked_at, full_walk_at, probed_at, lastmod_trust,
        unreachable, sitemaps, digests_from)
      VALUES (p_site, p_run, p_walked_at, p_full_walk_at, p_probed_at, p_lastmod_trust, p_unreachable, p_sitemaps,
        (SELECT coalesce(jsonb_object_agg(u, coalesce(f.digests_from -> u, to_jsonb(f.seq))), '{}')
         FROM f, unnest(p_keep) u))
      ON CONFLICT (site, run_id) DO UPDATE SET seq = nextval(pg_get_serial_sequence('state_sites', 'seq')),
        walked_at = excluded.walked_at, full_walk_at = excluded.full_walk_at, probed_at = excluded.probed_at,
        lastmod_trust = excluded.lastmod_trust, unreachable = excluded.unreachable, sitemaps = excluded.sitemaps,
        digests_from = excluded.digests_from
      RETURNING s.seq)
  SELECT v.seq INTO v_seq FROM v;
  PERFORM set_config('usp.digest_seq', v_seq::text, true);
END
$usp$;
`;

/** A page column of `page_rows`: a row's own, or a block row's element's key (`->>`), cast to the column's type. */
const blockColumn = (column: string, key: string, type: 'text' | 'real'): string =>
  `CASE WHEN p.pages IS NULL THEN p.${column} ELSE (e.page ->> '${key}')::${type} END AS ${column}`;

// Version 6: the unchanged rows of one sitemap a site's walk held back and handed over in bulk
// (`SiteOutput.pageLines`; nearly every row of a run after a few pages were removed: 500,000 of
// 526,000 in the 1,000-site bench) are ONE row of `page_data` a block of up to ~250: `pages`, a
// json array of each page's `url`, `priority`, `lastModified` and `changeFrequency`; the row's own
// `sitemap`, `url` '', `change` 'unchanged', the other columns NULL. `page_rows` gives every page
// its row, with the same columns and types, a block's pages in their order in its place. No row is
// rewritten; a site's rows (blocks included) are still found and removed by `site_run`.
//   `json`, not `jsonb`, as the other JSON columns: the server checks the text and keeps it, where
// `jsonb` builds a tree and a numeric a priority (COPY of 500,000 pages in 2,000 blocks: 470 ms
// against 800; as a row each, ~1.1 s); the view reads a block's text again (a count of those
// pages: 130 ms against 50).
const V6 = `
ALTER TABLE page_data ADD COLUMN pages json;
CREATE OR REPLACE VIEW page_rows AS
  SELECT k.run_id, k.site, p.sitemap, ${blockColumn('url', 'url', 'text')},
    ${blockColumn('last_modified', 'lastModified', 'text')},
    ${blockColumn('change_frequency', 'changeFrequency', 'text')}, ${blockColumn('priority', 'priority', 'real')},
    p.change, p.news_story, p.images, p.alternates, p.extensions
  FROM page_data p JOIN site_runs k ON k.id = p.site_run
    LEFT JOIN LATERAL json_array_elements(p.pages) WITH ORDINALITY e(page, n) ON true;
`;

/** Migrations: `MIGRATIONS[v]` takes a database from version v to v + 1 (0: empty). */
const MIGRATIONS: readonly string[] = [V1, V2, V3, V4, V5, V6];

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
 * once take turns (an advisory lock). `target`: the version to reach (below the current one only in
 * the tests of a migration, which build an older database with it).
 */
export async function prepareSchema(
  client: pg.ClientBase,
  where: string,
  target = POSTGRES_SCHEMA,
): Promise<void> {
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
    for (let v = version; v < target; v++) await client.query(MIGRATIONS[v]);
    await client.query(
      `INSERT INTO usp_schema (id, version) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET version = excluded.version
       WHERE usp_schema.version < excluded.version`,
      [target],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
