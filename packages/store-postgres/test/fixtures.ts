import type { SitemapState, SiteState } from '@usp-ts/batch';
import { startTestPostgres, type TestPostgres } from '@usp-ts/test-postgres';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';

/**
 * A throwaway PostgreSQL for the file's tests (started before them, stopped after) and a fresh
 * database in it for each call of `database`, named `prefix` and a number.
 */
export function useTestDatabases(prefix: string): { database: () => Promise<string> } {
  let server: TestPostgres;
  beforeAll(async () => {
    server = await startTestPostgres();
  }, 60_000);
  afterAll(() => server?.stop());
  let n = 0;
  return { database: () => server.createDatabase(`${prefix}${n++}`) };
}

/** One statement on a connection of its own, for what a test reads or plants behind the store. */
export async function query<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** A pages sitemap's state, validators unset; `pages` left out when undefined (kept, as after a 304). */
export function stateSitemap(url: string, pages?: Uint8Array | null): SitemapState {
  return {
    url,
    finalUrl: url,
    type: 'PagesXMLSitemap',
    children: [],
    pageCount: 1,
    news: false,
    fetchedAt: 1,
    etag: null,
    lastModified: null,
    indexLastmod: null,
    bodySha256: null,
    crawlDelayMs: null,
    ...(pages === undefined ? {} : { pages }),
  };
}

/** A site's state walked (fully, and probed) at `walkedAt`, with `sitemaps`. */
export function siteState(site: string, walkedAt: number, sitemaps: SitemapState[] = []): SiteState {
  return {
    site,
    walkedAt,
    fullWalkAt: walkedAt,
    probedAt: walkedAt,
    lastmodTrust: 0,
    unreachable: null,
    sitemaps,
  };
}
