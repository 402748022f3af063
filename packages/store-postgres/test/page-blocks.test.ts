import { type PageRow, type SiteResult, UnchangedBlocks } from '@usp-ts/batch';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { blockCopyLine } from '../src/page-blocks.js';
import { openPostgresStore } from '../src/postgres-store.js';
import { readPageRows } from '../src/read-rows.js';
import { POSTGRES_SCHEMA, prepareSchema } from '../src/schema.js';
import { query, useTestDatabases } from './fixtures.js';

const { database } = useTestDatabases('b');

const SITE = 'https://l.example/ü/';
const BLOCKS = new UnchangedBlocks(SITE, 'utf8');

/** A held row's line as `PageTracker` writes it: site and sitemap first, the plain unchanged tail last. */
const unchanged = (url: string, site = SITE, sitemap = `${site}s.xml`): string =>
  `{"site":${JSON.stringify(site)},"sitemap":${JSON.stringify(sitemap)},"url":${JSON.stringify(url)},` +
  `"priority":0.5,"lastModified":"2026-11-20","changeFrequency":null,"newsStory":null,"images":null,` +
  `"alternates":null,"change":"unchanged"}`;

const block = (lines: readonly string[]): Buffer => Buffer.from(lines.map((l) => `${l}\n`).join(''));

const result = (site: string, pages: number): SiteResult => ({
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

/** Every column of `page_rows` as text with its type, in the order the view gives them, and the rows `page_data` holds. */
async function viewRows(url: string, run: string): Promise<{ rows: unknown[]; stored: number }> {
  const columns = [
    'run_id',
    'site',
    'sitemap',
    'url',
    'last_modified',
    'change_frequency',
    'priority',
    'change',
  ]
    .concat(['news_story', 'images', 'alternates', 'extensions'])
    .map((c) => `${c}::text AS ${c}, pg_typeof(${c})::text AS ${c}_type`);
  const rows = await query(url, `SELECT ${columns.join(', ')} FROM page_rows WHERE run_id = $1`, [run]);
  const stored = await query<{ n: number }>(
    url,
    'SELECT count(*)::int AS n FROM page_data p JOIN site_runs k ON k.id = p.site_run WHERE k.run_id = $1',
    [run],
  );
  return { rows, stored: stored[0]?.n ?? -1 };
}

describe('a block of held rows as one row (schema 6, SiteOutput.pageLines)', () => {
  it('makes a block of plain unchanged rows of the site and of one sitemap one COPY line, and refuses any other', () => {
    const sitemap = `${SITE}s.xml`;
    const plain = Array.from({ length: 300 }, (_, i) => unchanged(`${SITE}p${i}\u00e9`));
    const prefix = `{"site":${JSON.stringify(SITE)},"sitemap":${JSON.stringify(sitemap)},`;
    const tail = ',"newsStory":null,"images":null,"alternates":null,"change":"unchanged"}';
    const cut = (lines: readonly string[], pre = prefix) =>
      `[${lines.map((l) => `{${l.slice(pre.length, -tail.length)}}`).join(',')}]`;
    const nulls = '\t\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\tunchanged\t';
    expect(blockCopyLine(block(plain), plain.length, BLOCKS)).toBe(`${sitemap}${nulls}${cut(plain)}\n`);
    expect(cut([plain[0] ?? ''])).toBe(
      `[{"url":"${SITE}p0\u00e9","priority":0.5,"lastModified":"2026-11-20","changeFrequency":null}]`,
    );
    // A sitemap whose string holds what its end looks like, escaped, a backslash, a newline, a
    // tab: its end is found; COPY's escapes double the backslashes of the array and write the
    // sitemap's value escaped.
    for (const odd of ['x","url":"y', 'x\\', 'x\\","url":"', 'ü\n"', 'a\tb', '']) {
      const of = `${SITE}${odd}`;
      const rows = [unchanged(`${SITE}a\\"`, SITE, of), unchanged(`${SITE}b`, SITE, of)];
      const pre = `{"site":${JSON.stringify(SITE)},"sitemap":${JSON.stringify(of)},`;
      const value = of.replaceAll('\\', '\\\\').replaceAll('\n', '\\n').replaceAll('\t', '\\t');
      expect(blockCopyLine(block(rows), 2, BLOCKS)).toBe(
        `${value}${nulls}${cut(rows, pre).replaceAll('\\', '\\\\')}\n`,
      );
    }
    const others = [
      unchanged(`${SITE}lone\ud800`),
      unchanged(`${SITE}x`, 'https://other.example/'),
      `${unchanged(`${SITE}ext`).slice(0, -1)},"extensions":{"v":1}}`,
      unchanged(`${SITE}changed`).replace('"unchanged"', '"changed"'),
      unchanged(`${SITE}ctl\u0001`),
      unchanged(`${SITE}s2`, SITE, `${SITE}s2.xml`),
      unchanged(`${SITE}s2`, SITE, `${SITE}s.xm`),
      unchanged(`${SITE}s2`, SITE, `${SITE}s.xml2`),
      unchanged(`${SITE}k`).replace(
        `"sitemap":${JSON.stringify(sitemap)},"url":"${SITE}k"`,
        `"url":"${SITE}k","sitemap":${JSON.stringify(sitemap)}`,
      ),
    ];
    for (const odd of others) {
      expect(blockCopyLine(block([plain[0] ?? '', odd, plain[1] ?? '']), 3, BLOCKS)).toBeNull();
      expect(blockCopyLine(block([odd, plain[0] ?? '']), 2, BLOCKS)).toBeNull();
    }
    // A count that is not the block's is not taken on trust; nothing is no block.
    expect(blockCopyLine(block(plain), plain.length - 1, BLOCKS)).toBeNull();
    expect(blockCopyLine(Buffer.alloc(0), 0, BLOCKS)).toBeNull();
  });

  it('gives through page_rows every column, type and row order the same rows handed over one by one give; usp export reads the same', async () => {
    const url = await database();
    const lines: string[] = [];
    for (let i = 0; i < 400; i++) lines.push(unchanged(`${SITE}p/${i}/\u{1f600}"q\\`));
    const rich: PageRow = {
      site: SITE,
      sitemap: `${SITE}s.xml`,
      url: `${SITE}rich`,
      priority: 1e21,
      lastModified: null,
      changeFrequency: 'daily',
      newsStory: null,
      images: null,
      alternates: [{ hreflang: 'fr', href: `${SITE}fr` }],
      change: 'unchanged',
    };
    // Blocks of other sitemaps, one with a quote, a backslash, a tab and a non-ASCII letter; an
    // integer priority (a real in the column), none, 1e+21, 0, 0.3 (not a float4 exactly); no date, a frequency.
    const elsewhere = (of: string) =>
      Array.from({ length: 50 }, (_, i) =>
        unchanged(`${SITE}e/${i}`, SITE, `${SITE}${of}`).replace(
          '"priority":0.5,"lastModified":"2026-11-20","changeFrequency":null',
          [
            '"priority":1,"lastModified":"2026-11-20","changeFrequency":"daily"',
            '"priority":null,"lastModified":null,"changeFrequency":null',
            '"priority":1e+21,"lastModified":"2026-11-20T10:00:00+01:00","changeFrequency":"never"',
            '"priority":0,"lastModified":"2026-11-20","changeFrequency":null',
            '"priority":0.30000000000000004,"lastModified":"2026","changeFrequency":"weekly"',
          ][i % 5] ?? '',
        ),
      );
    const blocks = [
      elsewhere('x"\\\tü.xml'),
      lines.slice(0, 150),
      elsewhere('s2.xml'),
      [...lines.slice(150, 200), JSON.stringify(rich), unchanged(`${SITE}lone\udc00`)],
      lines.slice(200, 210).map((l) => l.replace(SITE, 'https://other.example/')),
      lines.slice(210),
    ];
    const write = async (run: string, bulk: boolean): Promise<void> => {
      const store = await openPostgresStore({ url, runId: run });
      const out = store.sink.begin(SITE);
      for (const b of blocks) {
        if (bulk) out.pageLines?.(block(b), b.length);
        else for (const l of b) out.pageLine?.(l);
      }
      await out.commit(result(SITE, blocks.flat().length));
      await store.close();
    };
    await write('one', false);
    await write('bulk', true);
    const one = await viewRows(url, 'one');
    const bulk = await viewRows(url, 'bulk');
    expect(one.rows).toHaveLength(blocks.flat().length);
    expect(one.stored).toBe(blocks.flat().length);
    const asRun = (rows: unknown[], run: string) => rows.map((r) => ({ ...(r as object), run_id: run }));
    expect(asRun(bulk.rows, 'one')).toEqual(one.rows);
    // Four blocks are a row each; the others' 62 rows (10 of another site) are a row each.
    expect(bulk.stored).toBe(4 + 62);
    const read = async (run: string) => {
      const rows: PageRow[] = [];
      for await (const r of readPageRows(url, { run })) rows.push(r);
      return rows;
    };
    const back = await read('bulk');
    expect(back).toEqual(await read('one'));
    expect(back).toHaveLength(blocks.flat().length);
    // The view's plain count, as the bench and users count.
    expect(await query(url, 'SELECT count(*)::int AS n FROM page_rows WHERE run_id = $1', ['bulk'])).toEqual([
      { n: blocks.flat().length },
    ]);
  });

  it("migrates a version 5 database in place (its rows and the view's column types kept); a later copy or a voided one removes a site's block rows too", async () => {
    const url = await database();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const columnTypes = () =>
      query(
        url,
        `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'page_rows' ORDER BY ordinal_position`,
      );
    let before: unknown[];
    try {
      await prepareSchema(client, url, 5);
      await client.query(
        `SELECT set_config('usp.site_run', usp_site_run('old', 'https://o.example/')::text, false)`,
      );
      await client.query(
        `INSERT INTO page_data (sitemap, url, priority, change) VALUES ('https://o.example/a.xml', 'https://o.example/p', 0.5, 'new')`,
      );
      before = await columnTypes();
    } finally {
      await client.end();
    }
    const old = await openPostgresStore({ url, runId: 'old' });
    expect(await query(url, 'SELECT version FROM usp_schema')).toEqual([{ version: POSTGRES_SCHEMA }]);
    expect(await columnTypes()).toEqual(before);
    expect(await query(url, 'SELECT site, url, priority, change FROM page_rows')).toEqual([
      { site: 'https://o.example/', url: 'https://o.example/p', priority: 0.5, change: 'new' },
    ]);
    // Blocks of the migrated site in its run, fenced: they replace the migrated row.
    const site = 'https://o.example/';
    const held = Array.from({ length: 20 }, (_, i) => unchanged(`${site}h${i}`, site));
    const first = old.sink.begin(site);
    first.pageLines?.(block(held.slice(0, 10)), 10);
    first.pageLines?.(block(held.slice(10)), 10);
    await first.commit(result(site, 20), { fence: async () => ({ token: 'c1', voids: [] }) });
    const stored = () => query(url, 'SELECT count(*)::int AS n FROM page_data');
    expect(await stored()).toEqual([{ n: 2 }]);
    expect(await query(url, 'SELECT count(*)::int AS n FROM page_rows')).toEqual([{ n: 20 }]);
    // A later copy replaces the blocks.
    const again = old.sink.begin(site);
    again.pageLines?.(block(held.slice(0, 5)), 5);
    await again.commit(result(site, 5), { fence: async () => ({ token: 'c2', voids: [] }) });
    expect(await stored()).toEqual([{ n: 1 }]);
    expect(await query(url, 'SELECT url FROM page_rows')).toEqual(
      held.slice(0, 5).map((_, i) => ({ url: `${site}h${i}` })),
    );
    await old.close();
    // A copy made void by another site's later try: its block rows go with it.
    const other = await openPostgresStore({ url, runId: 'old' });
    await other.sink.begin('https://z.example/').commit(result('https://z.example/', 0), {
      fence: async () => ({ token: 'c3', voids: ['c2'] }),
    });
    await other.close();
    expect(await stored()).toEqual([{ n: 0 }]);
  });
});
