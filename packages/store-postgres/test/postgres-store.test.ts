import {
  type ListedPageRow,
  type PageRow,
  type SitemapRow,
  type SiteResult,
  type SiteSink,
  type SiteState,
  sitemapRowOf,
} from '@usp-ts/batch';
import { siteSinkSuite, stateStoreSuite } from '@usp-ts/driver-testkit';
import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { OneMessage } from '../src/one-message.js';
import { openPostgresStateStore, openPostgresStore, type PostgresStore } from '../src/postgres-store.js';
import { readPageRows } from '../src/read-rows.js';
import { readRunSummary } from '../src/read-run-summary.js';
import { POSTGRES_SCHEMA, prepareSchema } from '../src/schema.js';
import { query, siteState, stateSitemap, useTestDatabases } from './fixtures.js';

const { database } = useTestDatabases('t');
const count = async (url: string, sql: string) => Number((await query<{ n: string }>(url, sql))[0].n);

const page = (site: string, url: string, change: 'new' | 'changed' = 'new'): PageRow => ({
  site,
  sitemap: `${site}a.xml`,
  url,
  priority: 0.5,
  lastModified: '2026-11-20',
  changeFrequency: 'daily',
  newsStory: null,
  images: [{ loc: `${url}\t.png`, caption: 'a\nb\\c', geoLocation: null, title: null, license: null }],
  alternates: null,
  extensions: { video: { title: 'x' } } as never,
  change,
});
const sitemap = (site: string): SitemapRow => ({
  site,
  url: `${site}a.xml`,
  parent: null,
  type: 'PagesXMLSitemap',
  status: 200,
  notModified: false,
  skipped: false,
  etag: '"e"',
  lastModified: null,
  bytes: 100,
  pages: 2,
  ms: 3,
  change: 'new',
});
const result = (site: string, pages = 2): SiteResult => ({
  site,
  status: 'ok',
  reason: null,
  pages,
  sitemaps: 1,
  requests: 2,
  notModified: 0,
  skipped: 0,
  bytes: 100,
  ms: 5,
});
const stateOf = (site: string, walkedAt: number): SiteState => siteState(site, walkedAt);

describe('the state alone', () => {
  let url = '';
  stateStoreSuite('openPostgresStateStore', {
    open: async () => {
      url = await database();
      return openPostgresStateStore({ url });
    },
    reopen: async () => openPostgresStateStore({ url }),
  });
});

describe('the store', () => {
  let url = '';
  let runs = 0;
  let runId = '';
  const sinkOf = async (): Promise<SiteSink> => {
    const store = await openPostgresStore({ url, runId });
    return Object.assign(Object.create(store.sink) as SiteSink, { close: () => store.close() });
  };
  siteSinkSuite('openPostgresStore', {
    open: async () => {
      url = await database();
      runId = `suite-${runs++}`;
      return sinkOf();
    },
    // The same run opened again: its committed sites are done.
    resume: sinkOf,
    async read() {
      const pages: PageRow[] = [];
      for await (const row of readPageRows(url, { run: runId })) pages.push(row);
      const sitemaps = (
        await query<Parameters<typeof sitemapRowOf>[0]>(url, 'SELECT * FROM sitemap_rows WHERE run_id = $1', [
          runId,
        ])
      ).map(sitemapRowOf);
      return { pages, sitemaps, sites: (await readRunSummary(url, runId)).sites };
    },
  });
});

describe('openPostgresStore', () => {
  it("commits a site's rows (COPY) and its state in one transaction, and reads the rows back as written", async () => {
    const url = await database();
    const store = await openPostgresStore({ url, runId: 'r1' });
    const site = 'https://a.example/';
    const out = store.sink.begin(site);
    const rows = [page(site, `${site}p1`), page(site, `${site}p2`, 'changed')];
    for (const r of rows) out.page(r);
    out.sitemap(sitemap(site));
    await out.commit(result(site), { saveState: (mark) => store.state.saveSite(stateOf(site, 7), mark) });
    expect((await store.state.loadSite(site))?.walkedAt).toBe(7);
    expect(store.sink.done.has(site)).toBe(true);
    await store.close();
    expect(await count(url, 'SELECT count(*) AS n FROM sitemap_rows WHERE not_modified = false')).toBe(1);
    expect(
      await count(url, `SELECT count(*) AS n FROM page_rows WHERE extensions->'video'->>'title' = 'x'`),
    ).toBe(2);
    expect(await count(url, 'SELECT count(*) AS n FROM runs WHERE ended_at IS NOT NULL')).toBe(1);
    const back: PageRow[] = [];
    for await (const r of readPageRows(url, { run: 'latest' })) back.push(r);
    expect(back).toEqual(rows);
    const changed: PageRow[] = [];
    for await (const r of readPageRows(url, { changes: ['changed'], site })) changed.push(r);
    expect(changed.map((r) => r.url)).toEqual([`${site}p2`]);
  });

  it('reads back every row of a site whose COPY text spans many pieces and shared Buffers, multi-byte characters and escapes included', async () => {
    const url = await database();
    const store = await openPostgresStore({ url, runId: 'r1' });
    const site = 'https://b.example/';
    const out = store.sink.begin(site);
    // ~3,000 rows of ~300 bytes: many 16 Ki-character pieces and several 64 KiB Buffers, with 2-,
    // 3- and 4-byte characters and COPY's escaped characters landing on every offset.
    const rows = Array.from({ length: 3_000 }, (_, i) =>
      page(
        site,
        `${site}${'é'.repeat(i % 7)}/日本${i}/${'😀'.repeat(i % 3)}?q=a\\b\tc&n=${'x'.repeat(i % 97)}`,
      ),
    );
    for (const r of rows) out.page(r);
    out.sitemap(sitemap(site));
    await out.commit(result(site));
    await store.close();
    const back: PageRow[] = [];
    for await (const r of readPageRows(url, { run: 'latest' })) back.push(r);
    expect(back.map((r) => r.url).sort()).toEqual(rows.map((r) => r.url).sort());
    expect(back).toHaveLength(3_000);
  });

  it("migrates a version 2 database (its page rows kept, keyed by site_runs since version 4, and replaced by a later copy); a commit's rows take their key from the transaction, given as objects or text, a row of another site keeps its own", async () => {
    const url = await database();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await prepareSchema(client, url, 2);
      await client.query(
        `INSERT INTO page_rows (run_id, site, sitemap, url, priority, change) VALUES ('old', 'https://o.example/', 'https://o.example/a.xml', 'https://o.example/p', 0.5, 'new')`,
      );
    } finally {
      await client.end();
    }
    const store = await openPostgresStore({ url, runId: 'r3' });
    const site = 'https://c.example/';
    const out = store.sink.begin(site);
    const other = page('https://elsewhere.example/', 'https://elsewhere.example/x');
    const { extensions: _, ...plain } = { ...(page(site, `${site}p2`) as ListedPageRow), images: null };
    const rows = [page(site, `${site}p1`), plain as PageRow, other];
    out.page(rows[0]);
    // As the runner hands marked rows to a sink that takes text: one read from its text, one parsed (another site's).
    out.pageLine?.(JSON.stringify(rows[1]));
    out.pageLine?.(JSON.stringify(rows[2]));
    const removed: PageRow = { site, sitemap: `${site}a.xml`, url: `${site}gone`, change: 'removed' };
    out.pageLine?.(JSON.stringify(removed));
    await out.commit(result(site, 4));
    await store.close();
    expect(await query(url, 'SELECT version FROM usp_schema')).toEqual([{ version: POSTGRES_SCHEMA }]);
    const back: PageRow[] = [];
    for await (const r of readPageRows(url, { run: 'r3' })) back.push(r);
    // The other site's row goes by a COPY of its own, after the site's.
    expect(back).toEqual([rows[0], rows[1], removed, other]);
    expect(await query(url, 'SELECT run_id, site, url FROM page_rows WHERE run_id = $1', ['old'])).toEqual([
      { run_id: 'old', site: 'https://o.example/', url: 'https://o.example/p' },
    ]);
    // Outside a commit the setting is unset: a row without its key is refused.
    const refused = await query(url, `INSERT INTO page_data (sitemap, url) VALUES ('s', 'u')`).catch(
      (e) => e,
    );
    expect((refused as { code?: string }).code).toBe('23502');
    // A later copy of a migrated site in its run replaces the migrated rows.
    const again = await openPostgresStore({ url, runId: 'old' });
    const copy = again.sink.begin('https://o.example/');
    copy.page(page('https://o.example/', 'https://o.example/q'));
    await copy.commit(result('https://o.example/', 1));
    await again.close();
    expect(await query(url, 'SELECT site, url FROM page_rows WHERE run_id = $1', ['old'])).toEqual([
      { site: 'https://o.example/', url: 'https://o.example/q' },
    ]);
    expect(
      await query(url, 'SELECT run_id, count(*)::int AS n FROM page_rows GROUP BY run_id ORDER BY run_id'),
    ).toEqual([
      { run_id: 'old', n: 1 },
      { run_id: 'r3', n: 4 },
    ]);
  });

  it('a commit whose COPY data the server refuses, or refused before its COPY, keeps nothing and leaves its connection usable', async () => {
    const url = await database();
    // One connection: each commit after a failing one goes on the connection the failure left.
    const store = await openPostgresStore({ url, runId: 'r1', maxConnections: 1 });
    try {
      const bad = store.sink.begin('https://b.example/');
      bad.page(page('https://b.example/', 'https://b.example/1'));
      // A page without a URL: the column refuses it in the middle of the COPY's data.
      bad.page({ ...page('https://b.example/', 'x'), url: null as never });
      for (let i = 2; i < 3_000; i++) bad.page(page('https://b.example/', `https://b.example/${i}`));
      const refused = await bad.commit(result('https://b.example/', 3_000)).catch((e) => e);
      expect(refused).toMatchObject({ code: 'USP_OUTPUT' });
      expect((refused as Error).message).toMatch(/null value in column "url"/);
      // Refused before its COPY (fencing): the data sent after the query is ignored.
      const first = store.sink.begin('https://f.example/');
      first.page(page('https://f.example/', 'https://f.example/1'));
      await first.commit(result('https://f.example/', 1), {
        fence: async () => ({ token: 'new', voids: ['old'] }),
      });
      const stale = store.sink.begin('https://f.example/');
      for (let i = 0; i < 2_000; i++) stale.page(page('https://f.example/', `https://f.example/s${i}`));
      const error = await stale
        .commit(result('https://f.example/', 2_000), { fence: async () => ({ token: 'old', voids: [] }) })
        .catch((e) => e);
      expect((error as Error).message).toMatch(/replaced by a later try/);
      const good = store.sink.begin('https://g.example/');
      good.page(page('https://g.example/', 'https://g.example/1'));
      good.page(page('https://g.example/', 'https://g.example/2'));
      await good.commit(result('https://g.example/', 2));
    } finally {
      await store.close();
    }
    expect(
      await query(url, 'SELECT site, count(*)::int AS n FROM page_rows GROUP BY site ORDER BY site'),
    ).toEqual([
      { site: 'https://f.example/', n: 1 },
      { site: 'https://g.example/', n: 2 },
    ]);
    expect(await query(url, 'SELECT site FROM site_rows ORDER BY site')).toEqual([
      { site: 'https://f.example/' },
      { site: 'https://g.example/' },
    ]);
  });

  it('commits a site without page rows or digests in one round trip (its rows and state as literals, read back as written), one with page rows in one too (the COPY data sent with its query), one with digests of any size in one (a binary COPY after the state row it belongs to)', async () => {
    const url = await database();
    const store = await openPostgresStore({ url, runId: 'r1' });
    const site = "https://o'k.example/\\";
    const odd = { ...sitemap(site), etag: `W/"a'b\\c\t$usp$"`, lastModified: 'ä\nß' };
    const queries = vi.spyOn(pg.Client.prototype, 'query');
    try {
      const quiet = store.sink.begin(site);
      quiet.sitemap(odd);
      await quiet.commit(result(site, 0), {
        saveState: (mark) => store.state.saveSite(stateOf(site, 7), mark),
      });
      expect(queries).toHaveBeenCalledTimes(1);
      expect(queries.mock.calls[0][0]).toBeTypeOf('string');
      queries.mockClear();
      const busy = store.sink.begin('https://p.example/');
      busy.page(page('https://p.example/', 'https://p.example/1'));
      await busy.commit(result('https://p.example/', 1));
      expect(queries).toHaveBeenCalledTimes(1);
      expect(queries.mock.calls[0][0]).toBeInstanceOf(OneMessage);
      // Digests, small, large, empty or of every byte, go as their bytes in one binary COPY.
      queries.mockClear();
      const q = "https://q.example/ä'\\";
      const digests = [
        new Uint8Array([0, 1, 0x27, 0x5c, 255]),
        Uint8Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256),
        new Uint8Array(0),
        Buffer.from(Uint8Array.from({ length: 300 }, (_, i) => i % 256)).subarray(10, 290),
      ];
      const withDigests = store.sink.begin(q);
      const digestState = {
        ...stateOf(q, 8),
        sitemaps: digests.map((pages, i) => ({ ...stateSitemap(`${q}${i}.xml`), pages })),
      };
      await withDigests.commit(result(q, 0), {
        saveState: (mark) => store.state.saveSite(digestState, mark),
      });
      expect(queries).toHaveBeenCalledTimes(1);
      expect(queries.mock.calls[0][0]).toBeInstanceOf(OneMessage);
      queries.mockRestore();
      for (const [i, pages] of digests.entries()) {
        expect(await store.state.loadPages(q, `${q}${i}.xml`)).toEqual(new Uint8Array(pages));
      }
      // A digest row takes its version from the transaction's setting (schema 5); unset, it is refused.
      const unset = await query(
        url,
        `INSERT INTO state_digests (site, url, pages) VALUES ('s', 'u', '')`,
      ).catch((e: Error) => e);
      expect((unset as Error).message).toMatch(/null value in column "seq"/);
    } finally {
      queries.mockRestore();
      await store.close();
    }
    const back = await query<Parameters<typeof sitemapRowOf>[0]>(
      url,
      'SELECT * FROM sitemap_rows WHERE site = $1',
      [site],
    );
    expect(back.map(sitemapRowOf)).toEqual([odd]);
  });

  it('a state that cannot be saved keeps none of the rows', async () => {
    const url = await database();
    const store = await openPostgresStore({ url });
    const site = 'https://b.example/';
    const out = store.sink.begin(site);
    out.page(page(site, `${site}p1`));
    const error = await out
      .commit(result(site), { saveState: () => Promise.reject(new Error('state down')) })
      .catch((e) => e);
    expect((error as Error).message).toMatch(/state down/);
    expect(store.sink.done.has(site)).toBe(false);
    await store.close();
    expect(await count(url, 'SELECT count(*) AS n FROM page_rows')).toBe(0);
    expect(await count(url, 'SELECT count(*) AS n FROM site_rows')).toBe(0);
  });

  it('two workers of one run: the second copy of a site reads the state the first read, and replaces it', async () => {
    const url = await database();
    // A token the fencing's PL/pgSQL block must quote as it is.
    const t1 = "t1'$usp$\\";
    const site = 'https://c.example/';
    const yesterday = await openPostgresStore({ url, runId: 'day1' });
    await yesterday.state.saveSite(stateOf(site, 1));
    await yesterday.close();
    const a = await openPostgresStore({ url, runId: 'day2' });
    const b = await openPostgresStore({ url, runId: 'day2' });
    const first = a.sink.begin(site);
    expect((await a.state.loadSite(site))?.walkedAt).toBe(1);
    first.page(page(site, `${site}p1`));
    first.page(page(site, `${site}p2`));
    await first.commit(result(site), {
      saveState: (mark) => a.state.saveSite(stateOf(site, 2), mark),
      fence: async () => ({ token: t1, voids: [] }),
    });
    // Worker a killed after its commit, before the queue heard: b walks the site again.
    const second = b.sink.begin(site);
    expect((await b.state.loadSite(site))?.walkedAt).toBe(1);
    second.page(page(site, `${site}p1`));
    second.page(page(site, `${site}p2`));
    await second.commit(result(site), {
      saveState: (mark) => b.state.saveSite(stateOf(site, 3), mark),
      fence: async () => ({ token: 't2', voids: [t1] }),
    });
    // A stalled try that lost the job comes back: refused.
    const stale = a.sink.begin(site);
    stale.page(page(site, `${site}stale`));
    const error = await stale
      .commit(result(site, 1), { fence: async () => ({ token: t1, voids: [] }) })
      .catch((e) => e);
    expect(error).toMatchObject({ code: 'USP_OUTPUT' });
    expect((error as Error).message).toMatch(/replaced by a later try/);
    await a.close();
    await b.close();
    expect(await count(url, 'SELECT count(*) AS n FROM page_rows')).toBe(2);
    expect(await count(url, `SELECT count(*) AS n FROM site_rows WHERE copy = 't2'`)).toBe(1);
    const next = await openPostgresStore({ url, runId: 'day3' });
    next.sink.begin(site).discard();
    expect((await next.state.loadSite(site))?.walkedAt).toBe(3);
    await next.close();
  });

  it("follows the run a site is begun with (a queue's): two workers' stores, each with a run of its own, keep one copy under the queue run", async () => {
    const url = await database();
    const site = 'https://e.example/';
    const yesterday = await openPostgresStore({ url });
    const before = yesterday.sink.begin(site, { run: 'queue-day1' });
    await before.commit(result(site, 0), {
      saveState: (mark) => yesterday.state.saveSite(stateOf(site, 1), mark),
    });
    await yesterday.close();
    const a = await openPostgresStore({ url });
    const b = await openPostgresStore({ url });
    const walk = async (store: PostgresStore, walkedAt: number, token: string, voids: string[]) => {
      const out = store.sink.begin(site, { run: 'queue-day2' });
      // Each copy reads the state the run before left, not the one a copy of this run saved.
      expect((await store.state.loadSite(site))?.walkedAt).toBe(1);
      out.page(page(site, `${site}p1`));
      await out.commit(result(site, 1), {
        saveState: (mark) => store.state.saveSite(stateOf(site, walkedAt), mark),
        fence: async () => ({ token, voids }),
      });
    };
    await walk(a, 2, 'a1', []);
    await walk(b, 3, 'b1', ['a1']);
    expect(a.sink.done.has(site)).toBe(false);
    await a.close();
    await b.close();
    expect(await query(url, 'SELECT run_id, site FROM site_rows ORDER BY run_id')).toEqual([
      { run_id: 'queue-day1', site },
      { run_id: 'queue-day2', site },
    ]);
    expect(await count(url, `SELECT count(*) AS n FROM page_rows WHERE run_id = 'queue-day2'`)).toBe(1);
    expect(await query(url, 'SELECT run_id FROM runs ORDER BY run_id')).toEqual([
      { run_id: 'queue-day1' },
      { run_id: 'queue-day2' },
    ]);
    expect(await query(url, 'SELECT run_id, walked_at FROM state_sites ORDER BY run_id')).toEqual([
      { run_id: 'queue-day1', walked_at: '1' },
      { run_id: 'queue-day2', walked_at: '3' },
    ]);
  });

  it('reads the states of the sites about to start in one statement (willLoad), each as its own read would, a save after the hint seen', async () => {
    const url = await database();
    const [a, b, c, fresh] = [
      'https://ra.example/',
      'https://rb.example/',
      'https://rc.example/',
      'https://rn.example/',
    ];
    const unreachable = { at: 5, since: 4, reason: "x: it's down" };
    const day1 = await openPostgresStore({ url, runId: 'day1' });
    for (const s of [a, b, c]) {
      const saved = { ...stateOf(s, 1), unreachable, sitemaps: [stateSitemap(`${s}a.xml`)] };
      await day1.sink.begin(s).commit(result(s, 0), { saveState: (m) => day1.state.saveSite(saved, m) });
    }
    await day1.close();
    // A first copy of `a` in day2 (a worker killed after its commit): a second copy reads day1's.
    const first = await openPostgresStore({ url, runId: 'day2' });
    await first.sink
      .begin(a)
      .commit(result(a, 0), { saveState: (m) => first.state.saveSite(stateOf(a, 2), m) });
    await first.close();
    const expected = async (s: string) => {
      const alone = await openPostgresStore({ url, runId: 'day2' });
      alone.sink.begin(s);
      const state = await alone.state.loadSite(s);
      await alone.close();
      return state;
    };
    const wanted = await Promise.all([a, b, c, fresh].map(expected));
    expect(wanted.map((s) => s?.walkedAt ?? null)).toEqual([1, 1, 1, null]);
    const store = await openPostgresStore({ url, runId: 'day2' });
    const queries = vi.spyOn(pg.Client.prototype, 'query');
    try {
      store.state.willLoad?.([a, b, c, fresh]);
      const got = [];
      for (const s of [a, b, c, fresh]) {
        store.sink.begin(s);
        got.push(await store.state.loadSite(s));
      }
      expect(got).toEqual(wanted);
      expect(queries).toHaveBeenCalledTimes(1);
    } finally {
      queries.mockRestore();
      await store.close();
    }
    // The state alone reads the latest version (day2's of `a`); a save after the hint is seen.
    const state = await openPostgresStateStore({ url });
    state.willLoad?.([a, b]);
    await state.saveSite(stateOf(b, 9));
    expect((await state.loadSite(a))?.walkedAt).toBe(2);
    expect((await state.loadSite(b))?.walkedAt).toBe(9);
    await state.close();
  });

  it("groups the commits that queue up into one text, each site's transaction landing once", async () => {
    const url = await database();
    // One connection: while the first commit is in flight, the others queue and go together.
    const store = await openPostgresStore({ url, runId: 'r1', maxConnections: 1 });
    const sites = [1, 2, 3, 4, 5].map((i) => `https://g${i}.example/`);
    const queries = vi.spyOn(pg.Client.prototype, 'query');
    try {
      await Promise.all(
        sites.map((s, i) => {
          const out = store.sink.begin(s);
          out.sitemap(sitemap(s));
          return out.commit(result(s, 0), { saveState: (m) => store.state.saveSite(stateOf(s, 10 + i), m) });
        }),
      );
      expect(queries).toHaveBeenCalledTimes(2);
    } finally {
      queries.mockRestore();
      await store.close();
    }
    expect(
      await query(url, 'SELECT site, count(*)::int AS n FROM site_rows GROUP BY site ORDER BY site'),
    ).toEqual(sites.map((site) => ({ site, n: 1 })));
    expect(await count(url, 'SELECT count(*) AS n FROM sitemap_rows')).toBe(5);
    expect(await query(url, 'SELECT site, walked_at FROM state_sites ORDER BY site')).toEqual(
      sites.map((site, i) => ({ site, walked_at: String(10 + i) })),
    );
  });

  it('a fencing refusal and a failure in the middle of a group: the others land once, each error goes to its own caller', async () => {
    const url = await database();
    const store = await openPostgresStore({ url, runId: 'r1', maxConnections: 1 });
    const voided = 'https://v.example/';
    // A later try of `voided` made the copy of try `old` void.
    await store.sink
      .begin(voided)
      .commit(result(voided, 0), { fence: async () => ({ token: 'new', voids: ['old'] }) });
    const [s0, s1, s3] = ['https://h0.example/', 'https://h1.example/', 'https://h3.example/'];
    const bad = 'https://bad.example/';
    const commit = (s: string, r: SiteResult, token?: string) => {
      const out = store.sink.begin(s);
      out.sitemap(sitemap(s));
      return out
        .commit(r, {
          saveState: (m) => store.state.saveSite(stateOf(s, 5), m),
          ...(token === undefined ? {} : { fence: async () => ({ token, voids: [] }) }),
        })
        .then(
          () => 'ok',
          (e: Error) => e.message,
        );
    };
    // s0 goes alone; s1, the stale copy, the bad one (a count PostgreSQL refuses) and s3 queue as one text.
    const queries = vi.spyOn(pg.Client.prototype, 'query');
    const outcomes = await Promise.all([
      commit(s0, result(s0, 0)),
      commit(s1, result(s1, 0)),
      commit(voided, result(voided, 0), 'old'),
      commit(bad, { ...result(bad, 0), pages: 1.5 }),
      commit(s3, result(s3, 0)),
    ]);
    const texts = queries.mock.calls.map((call) => String(call[0]));
    queries.mockRestore();
    await store.close();
    expect(texts.filter((t) => t.includes(s1) && t.includes(bad) && t.includes(s3))).toHaveLength(1);
    expect(outcomes[0]).toBe('ok');
    expect(outcomes[1]).toBe('ok');
    expect(outcomes[2]).toMatch(/replaced by a later try/);
    expect(outcomes[3]).toMatch(/^cannot write to .*integer/);
    expect(outcomes[4]).toBe('ok');
    expect(await query(url, 'SELECT site, copy FROM site_rows ORDER BY site')).toEqual([
      { site: s0, copy: null },
      { site: s1, copy: null },
      { site: s3, copy: null },
      { site: voided, copy: 'new' },
    ]);
    expect(await count(url, 'SELECT count(*) AS n FROM sitemap_rows')).toBe(3);
    expect(
      await query(url, 'SELECT site, count(*)::int AS n FROM state_sites GROUP BY site ORDER BY site'),
    ).toEqual([s0, s1, s3].map((site) => ({ site, n: 1 })));
  });

  it("a site's first commit in the store's own run removes no earlier copy; a second one replaces it, after the first even when sent before its end", async () => {
    const url = await database();
    const store = await openPostgresStore({ url });
    const site = 'https://f.example/';
    let texts: string[] = [];
    const queries = vi.spyOn(pg.Client.prototype, 'query');
    try {
      const first = store.sink.begin(site);
      first.page(page(site, `${site}old`));
      first.sitemap(sitemap(site));
      const withDigest = { ...stateSitemap(`${site}a.xml`), pages: new Uint8Array([1, 2]) };
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const firstDone = first.commit(result(site, 1), {
        saveState: async (m) => {
          await held;
          await store.state.saveSite({ ...stateOf(site, 1), sitemaps: [withDigest] }, m);
        },
      });
      // Sent while the first is held before it reaches the server: it must not land before it.
      const second = store.sink.begin(site);
      second.sitemap(sitemap(site));
      const secondDone = second.commit(result(site, 0), {
        saveState: (m) => store.state.saveSite(stateOf(site, 2), m),
      });
      // (Time for the second to land if it went at once: a new connection's round trip.)
      await query(url, 'SELECT 1');
      release();
      await Promise.all([firstDone, secondDone]);
      texts = queries.mock.calls
        .map((c): unknown => c[0])
        .map((q) => (q instanceof OneMessage ? q.text : q))
        .filter((t): t is string => typeof t === 'string');
    } finally {
      queries.mockRestore();
    }
    // The removal of an earlier copy in this run (its rows; its digests go as rows no version refers to).
    const earlier = /DELETE FROM (page_rows|sitemap_rows|site_rows) WHERE run_id = /;
    const removals = texts.filter((t) => earlier.test(t));
    expect(texts.filter((t) => t.includes('INSERT INTO site_rows'))).toHaveLength(2);
    // The first commit's texts removed nothing; the second's removed the first's rows and digests.
    expect(removals).toHaveLength(1);
    expect(removals[0]).toContain('INSERT INTO site_rows');
    expect(removals[0]).toMatch(/DELETE FROM page_data WHERE site_run = /);
    await store.close();
    expect(await query(url, 'SELECT site, pages FROM site_rows')).toEqual([{ site, pages: 0 }]);
    expect(await count(url, 'SELECT count(*) AS n FROM page_rows')).toBe(0);
    expect(await count(url, 'SELECT count(*) AS n FROM sitemap_rows')).toBe(1);
    expect(await count(url, 'SELECT count(*) AS n FROM state_digests')).toBe(0);
    expect(await query(url, 'SELECT walked_at::int AS w FROM state_sites')).toEqual([{ w: 2 }]);
  });

  it('opens a database that holds the current schema with one statement', async () => {
    const url = await database();
    await (await openPostgresStore({ url })).close();
    const queries = vi.spyOn(pg.Client.prototype, 'query');
    let store: PostgresStore | undefined;
    try {
      store = await openPostgresStore({ url });
      expect(queries).toHaveBeenCalledTimes(1);
    } finally {
      queries.mockRestore();
      await store?.close();
    }
    // A run named by the caller is read for the sites it holds: one statement more.
    const named = await openPostgresStore({ url, runId: 'named' });
    await named.sink.begin('https://n.example/').commit(result('https://n.example/', 0));
    await named.close();
    const again = await openPostgresStore({ url, runId: 'named' });
    expect([...again.sink.done]).toEqual(['https://n.example/']);
    await again.close();
  });

  it('resumes a run: its committed sites are done', async () => {
    const url = await database();
    const first = await openPostgresStore({ url, runId: 'r' });
    const out = first.sink.begin('https://d.example/');
    await out.commit(result('https://d.example/', 0));
    first.sink.begin('https://e.example/').page(page('https://e.example/', 'https://e.example/p'));
    await first.close();
    const again = await openPostgresStore({ url, runId: 'r' });
    expect([...again.sink.done]).toEqual(['https://d.example/']);
    await again.close();
  });

  it('an older tool refuses a newer schema with one line; the PG* variables connect without a URL', async () => {
    const url = await database();
    const store = await openPostgresStore({ url });
    await store.close();
    await query(url, 'UPDATE usp_schema SET version = 99');
    const error = await openPostgresStore({ url }).catch((e) => e);
    expect((error as Error).message).toMatch(/holds usp schema 99; this usp reads up to 6: upgrade usp$/);
    expect((error as Error).message).not.toContain('\n');
    const saved = { ...process.env };
    const u = new URL(url);
    Object.assign(process.env, {
      PGHOST: u.hostname,
      PGPORT: u.port,
      PGUSER: 'postgres',
      PGDATABASE: u.pathname.slice(1),
    });
    try {
      await query(url, `UPDATE usp_schema SET version = ${POSTGRES_SCHEMA}`);
      const viaEnv = await openPostgresStore();
      await viaEnv.close();
    } finally {
      for (const k of ['PGHOST', 'PGPORT', 'PGUSER', 'PGDATABASE']) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
  });
});
