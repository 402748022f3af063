import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PAGE_COLUMNS, type PageRow } from '@usp-ts/batch';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { PageArrays } from '../src/page-arrays.js';
import { openSqliteStore } from '../src/sqlite-store.js';
import { siteResult } from './site-result.js';

const dir = mkdtempSync(join(tmpdir(), 'usp-page-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SITE = 'https://l.example/ü/';

/** A held row's line as `PageTracker` writes it: site and sitemap first, the plain tail last. */
const unchanged = (url: string, site = SITE, sitemap = `${site}s.xml`): string =>
  `{"site":${JSON.stringify(site)},"sitemap":${JSON.stringify(sitemap)},"url":${JSON.stringify(url)},` +
  `"priority":0.5,"lastModified":"2026-11-20","changeFrequency":null,"newsStory":null,"images":null,` +
  `"alternates":null,"change":"unchanged"}`;

const block = (lines: readonly string[]): Buffer => Buffer.from(lines.map((l) => `${l}\n`).join(''));

/**
 * Every page column with its type and bytes, as `page_rows` gives them, a site's rows in the order
 * they were written; and how many rows `page_data` holds.
 */
function columns(path: string): { rows: unknown[]; stored: number } {
  const db = new Database(path, { readonly: true });
  try {
    const exact = PAGE_COLUMNS.map((c) => `typeof(${c}), hex(${c})`).join(', ');
    return {
      rows: db.prepare(`SELECT ${exact} FROM page_rows`).raw().all(),
      stored: db.prepare('SELECT count(*) FROM page_data').pluck().get() as number,
    };
  } finally {
    db.close();
  }
}

describe('page rows handed over in bulk (SiteOutput.pageLines)', () => {
  it('makes a block of plain unchanged rows of the site one array, and adds any other block line by line', () => {
    const one = (lines: readonly string[], rows = lines.length) => {
      const bulk = new PageArrays(SITE);
      bulk.addLines(block(lines), rows);
      return bulk.arrays();
    };
    const byLine = (lines: readonly string[]) => {
      const arrays = new PageArrays(SITE);
      for (const l of lines) arrays.add(l);
      return arrays.arrays();
    };
    // 300 rows, past the characters of one array made line by line.
    const plain = Array.from({ length: 300 }, (_, i) => unchanged(`${SITE}p${i}\u00e9`));
    expect(byLine(plain).length).toBeGreaterThan(1);
    // Each row cut to the keys that vary: the site's and the sitemap's keys and the unchanged tail
    // are the insert's.
    const sitemap = `${SITE}s.xml`;
    const prefix = `{"site":${JSON.stringify(SITE)},"sitemap":${JSON.stringify(sitemap)},`;
    const tail = ',"newsStory":null,"images":null,"alternates":null,"change":"unchanged"}';
    const cut = plain.map((l) => `{${l.slice(prefix.length, -tail.length)}}`);
    expect(cut[0]).toBe(
      `{"url":"${SITE}p0\u00e9","priority":0.5,"lastModified":"2026-11-20","changeFrequency":null}`,
    );
    const array = (rows: readonly (string | undefined)[], of = sitemap) => ({
      form: 'unchanged',
      bytes: Buffer.from(`[${rows.join(',')}]`),
      sitemap: of,
    });
    expect(one(plain)).toEqual([array(cut)]);
    // A block of one row.
    expect(one([plain[7] ?? ''])).toEqual([array([cut[7]])]);
    // A sitemap whose string holds what its end looks like, escaped: its end is found.
    for (const odd of ['x","url":"y', 'x\\', 'x\\","url":"', 'ü\n"', '']) {
      const of = `${SITE}${odd}`;
      const rows = [unchanged(`${SITE}a`, SITE, of), unchanged(`${SITE}b`, SITE, of)];
      const cutOf = rows.map(
        (l) =>
          `{${l.slice(`{"site":${JSON.stringify(SITE)},"sitemap":${JSON.stringify(of)},`.length, -tail.length)}}`,
      );
      expect(one(rows)).toEqual([array(cutOf, of)]);
    }
    // Each of these makes its block one that is read line by line, as `add` reads it.
    const others = [
      unchanged(`${SITE}lone\ud800`),
      unchanged(`${SITE}x`, 'https://other.example/'),
      `${unchanged(`${SITE}ext`).slice(0, -1)},"extensions":{"v":1}}`,
      unchanged(`${SITE}changed`).replace('"unchanged"', '"changed"'),
      unchanged(`${SITE}ctl\u0001`),
      // Another sitemap than the first line's, one that is a prefix of it, or one longer.
      unchanged(`${SITE}s2`, SITE, `${SITE}s2.xml`),
      unchanged(`${SITE}s2`, SITE, `${SITE}s.xm`),
      unchanged(`${SITE}s2`, SITE, `${SITE}s.xml2`),
      // The sitemap's key elsewhere in the line.
      unchanged(`${SITE}k`).replace(
        `"sitemap":${JSON.stringify(sitemap)},"url":"${SITE}k"`,
        `"url":"${SITE}k","sitemap":${JSON.stringify(sitemap)}`,
      ),
    ];
    for (const odd of others) {
      for (const lines of [
        [plain[0] ?? '', odd, plain[1] ?? ''],
        [odd, plain[0] ?? ''],
      ]) {
        expect(one(lines)).toEqual(byLine(lines));
      }
    }
    // A count that is not the block's is not taken on trust.
    expect(one(plain, plain.length - 1)).toEqual(byLine(plain));
  });

  it('writes every column as the same rows handed over one by one', async () => {
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
    // Blocks of other sitemaps, one of them with a quote, a backslash and a non-ASCII letter; an
    // integer priority (a REAL in the column), none, no date, a frequency.
    const elsewhere = (of: string) =>
      Array.from({ length: 40 }, (_, i) =>
        unchanged(`${SITE}e/${i}`, SITE, `${SITE}${of}`).replace(
          '"priority":0.5,"lastModified":"2026-11-20","changeFrequency":null',
          [
            '"priority":1,"lastModified":"2026-11-20","changeFrequency":"daily"',
            '"priority":null,"lastModified":null,"changeFrequency":null',
            '"priority":1e+21,"lastModified":"2026-11-20T10:00:00+01:00","changeFrequency":"never"',
            '"priority":0,"lastModified":"2026-11-20","changeFrequency":null',
          ][i % 4] ?? '',
        ),
      );
    const blocks = [
      elsewhere('x"\\ü.xml'),
      lines.slice(0, 150),
      elsewhere('s2.xml'),
      [...lines.slice(150, 200), JSON.stringify(rich), unchanged(`${SITE}lone\udc00`)],
      lines.slice(200, 210).map((l) => l.replace(SITE, 'https://other.example/')),
      lines.slice(210),
    ];
    const write = async (bulk: boolean): Promise<ReturnType<typeof columns>> => {
      const path = join(dir, `${bulk}.sqlite`);
      const store = openSqliteStore(path);
      const out = store.sink.begin(SITE);
      for (const b of blocks) {
        if (bulk) out.pageLines?.(block(b), b.length);
        else for (const l of b) out.pageLine?.(l);
      }
      await out.commit(siteResult(SITE));
      await store.close();
      return columns(path);
    };
    const one = await write(false);
    expect(one.rows).toHaveLength(blocks.flat().length);
    expect(one.stored).toBe(blocks.flat().length);
    const bulk = await write(true);
    expect(bulk.rows).toEqual(one.rows);
    // The blocks of plain unchanged rows are a row each (results schema 3: the first three and the
    // last); the others' 62 rows are added line by line, a row each.
    expect(bulk.stored).toBe(4 + 62);
  });
});
