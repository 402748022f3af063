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
const unchanged = (url: string, site = SITE): string =>
  `{"site":${JSON.stringify(site)},"sitemap":${JSON.stringify(`${site}s.xml`)},"url":${JSON.stringify(url)},` +
  `"priority":0.5,"lastModified":"2026-11-20","changeFrequency":null,"newsStory":null,"images":null,` +
  `"alternates":null,"change":"unchanged"}`;

const block = (lines: readonly string[]): Buffer => Buffer.from(lines.map((l) => `${l}\n`).join(''));

/** Every page column with its type and bytes, with the site, in the order the rows were written. */
function columns(path: string): unknown[] {
  const db = new Database(path, { readonly: true });
  try {
    const exact = PAGE_COLUMNS.map((c) => `typeof(${c}), hex(${c})`).join(', ');
    return db
      .prepare(
        `SELECT ${exact} FROM (SELECT s.site, p.*, p.rowid AS n FROM page_data p
         JOIN site_runs s ON s.id = p.site_run) ORDER BY n`,
      )
      .raw()
      .all();
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
    // Each row cut to the keys that vary: the site's key and the unchanged tail are the insert's.
    const prefix = `{"site":${JSON.stringify(SITE)},`;
    const tail = ',"newsStory":null,"images":null,"alternates":null,"change":"unchanged"}';
    const cut = plain.map((l) => `{${l.slice(prefix.length, -tail.length)}}`);
    expect(cut[0]).toBe(
      `{"sitemap":"${SITE}s.xml","url":"${SITE}p0\u00e9","priority":0.5,"lastModified":"2026-11-20","changeFrequency":null}`,
    );
    expect(one(plain)).toEqual([{ form: 'unchanged', bytes: Buffer.from(`[${cut.join(',')}]`) }]);
    // A block of one row.
    expect(one([plain[7] ?? ''])).toEqual([{ form: 'unchanged', bytes: Buffer.from(`[${cut[7]}]`) }]);
    // Each of these makes its block one that is read line by line, as `add` reads it.
    const others = [
      unchanged(`${SITE}lone\ud800`),
      unchanged(`${SITE}x`, 'https://other.example/'),
      `${unchanged(`${SITE}ext`).slice(0, -1)},"extensions":{"v":1}}`,
      unchanged(`${SITE}changed`).replace('"unchanged"', '"changed"'),
      unchanged(`${SITE}ctl\u0001`),
    ];
    for (const odd of others) {
      const lines = [plain[0] ?? '', odd, plain[1] ?? ''];
      expect(one(lines)).toEqual(byLine(lines));
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
    const blocks = [
      lines.slice(0, 150),
      [...lines.slice(150, 200), JSON.stringify(rich), unchanged(`${SITE}lone\udc00`)],
      lines.slice(200, 210).map((l) => l.replace(SITE, 'https://other.example/')),
      lines.slice(210),
    ];
    const write = async (bulk: boolean): Promise<unknown[]> => {
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
    expect(one).toHaveLength(blocks.flat().length);
    expect(await write(true)).toEqual(one);
  });
});
