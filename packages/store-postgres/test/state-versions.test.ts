import type { SiteResult, SiteState } from '@usp-ts/batch';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPostgresStore } from '../src/postgres-store.js';
import { POSTGRES_SCHEMA, prepareSchema } from '../src/schema.js';
import { query, siteState, stateSitemap, useTestDatabases } from './fixtures.js';

const { database } = useTestDatabases('v');

const site = 'https://s.example/';
const A = `${site}a.xml`;
const B = `${site}b.xml`;
const bytes = (...b: number[]) => new Uint8Array(b);
const result = (): SiteResult => ({
  site,
  status: 'ok',
  reason: null,
  pages: 0,
  sitemaps: 2,
  requests: 2,
  notModified: 0,
  skipped: 0,
  bytes: 100,
  ms: 5,
});
/** A state whose a.xml and b.xml carry `a` and `b` (undefined: kept from the version read, as after a 304). */
const stateOf = (walkedAt: number, a: Uint8Array | null | undefined, b: Uint8Array | null | undefined) =>
  siteState(site, walkedAt, [stateSitemap(A, a), stateSitemap(B, b)]);

/**
 * One walk of the site in run `run`, as `batchWalk` does it: begin, read the state and the
 * digests it asks for, commit its rows and next state together. Gives what it read.
 */
async function walk(url: string, run: string, next: (walkedAt: number | undefined) => SiteState) {
  const store = await openPostgresStore({ url, runId: run });
  try {
    const out = store.sink.begin(site);
    const read = await store.state.loadSite(site);
    const digests = [await store.state.loadPages(site, A), await store.state.loadPages(site, B)];
    await out.commit(result(), { saveState: (mark) => store.state.saveSite(next(read?.walkedAt), mark) });
    return { walkedAt: read?.walkedAt, digests };
  } finally {
    await store.close();
  }
}

/** The digest rows of the database, as byte lists, sorted. */
const digestRows = async (url: string) =>
  (await query<{ pages: Buffer }>(url, 'SELECT pages FROM state_digests'))
    .map((r) => [...r.pages].join(','))
    .sort();

describe('state versions share digest rows (schema 2)', () => {
  it('a version keeps the digests of its 304s by sharing the rows of the version it was computed from; a row goes when no version refers to it; a second copy in a run reads what the first read', async () => {
    const url = await database();
    await walk(url, 'day1', () => stateOf(1, bytes(1), bytes(2)));
    expect(await digestRows(url)).toEqual(['1', '2']);
    // a.xml answered 304: its digest is not written again.
    const first = await walk(url, 'day2', (w) => stateOf((w ?? 0) + 1, undefined, bytes(3)));
    expect(first).toEqual({ walkedAt: 1, digests: [bytes(1), bytes(2)] });
    expect(await digestRows(url)).toEqual(['1', '2', '3']);
    // The same site again in day2 (a worker killed after its commit): computed against day1's
    // version and digests, it replaces the first copy's state and its own digest rows.
    const second = await walk(url, 'day2', (w) => stateOf((w ?? 0) + 2, undefined, bytes(4)));
    expect(second).toEqual({ walkedAt: 1, digests: [bytes(1), bytes(2)] });
    expect(await digestRows(url)).toEqual(['1', '2', '4']);
    // Nothing changed: no digest row written; day1's version goes, and with it b.xml's first digest.
    const third = await walk(url, 'day3', (w) => stateOf((w ?? 0) + 1, undefined, undefined));
    expect(third).toEqual({ walkedAt: 3, digests: [bytes(1), bytes(4)] });
    expect(await digestRows(url)).toEqual(['1', '4']);
    expect(await query(url, 'SELECT run_id, walked_at::int AS w FROM state_sites ORDER BY seq')).toEqual([
      { run_id: 'day2', w: 3 },
      { run_id: 'day3', w: 4 },
    ]);
    // b.xml dropped (null) while day3's version still refers to its row; a.xml shared by all.
    const fourth = await walk(url, 'day4', (w) => stateOf((w ?? 0) + 1, undefined, null));
    expect(fourth).toEqual({ walkedAt: 4, digests: [bytes(1), bytes(4)] });
    expect(await digestRows(url)).toEqual(['1', '4']);
    const fifth = await walk(url, 'day5', (w) => stateOf((w ?? 0) + 1, undefined, undefined));
    expect(fifth).toEqual({ walkedAt: 5, digests: [bytes(1), null] });
    expect(await digestRows(url)).toEqual(['1']);
  });

  it('migrates a version 1 database in place: each version reads the digests it had, rows of no version go', async () => {
    const url = await database();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await prepareSchema(client, url, 1);
      // Two versions of the site as version 1 kept them (a digest row per version), and a row of no version.
      for (const [run, walkedAt, a, b] of [
        ['day1', 1, '\\x01', '\\x02'],
        ['day2', 2, '\\x01', '\\x03'],
      ] as const) {
        const sitemaps = JSON.stringify(stateOf(walkedAt, undefined, undefined).sitemaps);
        await client.query(
          `INSERT INTO state_sites (site, run_id, walked_at, full_walk_at, probed_at, lastmod_trust, unreachable, sitemaps)
           VALUES ($1, $2, $3, $3, $3, 0, NULL, $4)`,
          [site, run, walkedAt, sitemaps],
        );
        await client.query(
          'INSERT INTO state_digests (site, run_id, url, pages) VALUES ($1, $2, $3, $4), ($1, $2, $5, $6)',
          [site, run, A, a, B, b],
        );
      }
      await client.query(
        `INSERT INTO state_digests (site, run_id, url, pages) VALUES ($1, 'gone', $2, '\\x09')`,
        [site, A],
      );
    } finally {
      await client.end();
    }
    // A second copy of day2's site reads day1's version; a new run, day2's.
    const again = await walk(url, 'day2', (w) => stateOf((w ?? 0) + 5, undefined, bytes(7)));
    expect(again).toEqual({ walkedAt: 1, digests: [bytes(1), bytes(2)] });
    expect(await query(url, 'SELECT version FROM usp_schema')).toEqual([{ version: POSTGRES_SCHEMA }]);
    expect(await digestRows(url)).toEqual(['1', '2', '7']);
    const next = await walk(url, 'day3', (w) => stateOf((w ?? 0) + 1, undefined, undefined));
    expect(next).toEqual({ walkedAt: 6, digests: [bytes(1), bytes(7)] });
    expect(await digestRows(url)).toEqual(['1', '7']);
  });
});
