import type { PageRow } from '@usp-ts/batch';
import { describe, expect, it } from 'vitest';
import { copyLineOfJson, pageCopyLine } from '../src/copy-text.js';

const SITE = 'https://s.example/';

/** A small seeded generator (mulberry32): the same rows at every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Characters that JSON or COPY treat specially, a multi-byte one, a lone surrogate, and plain ones.
const PIECES = [
  'a',
  'b/c',
  '"',
  '\\',
  '\t',
  '\n',
  '\r',
  '\u00e9',
  '\u{1f600}',
  '\ud800',
  ',',
  ':',
  '{',
  ']',
  'null',
  '\\N',
  ' ',
];

function rowOf(next: () => number): PageRow {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)];
  const text = (): string => {
    let s = '';
    const n = Math.floor(next() * 4);
    for (let i = 0; i < n; i++) s += next() < 0.8 ? 'x' : pick(PIECES);
    return s;
  };
  const site = next() < 0.9 ? SITE : `${SITE}${text()}`;
  const sitemap = `${SITE}${text()}.xml`;
  const url = `${SITE}${text()}`;
  if (next() < 0.15) return { site, sitemap, url, change: 'removed' };
  // Half the rows plain (nothing nested), as nearly every page of a run is.
  const plain = next() < 0.5;
  const nested = (): unknown =>
    plain
      ? null
      : pick([
          null,
          { title: text(), keywords: [text(), 1.5, true, null] },
          [{ loc: text(), '2': 1 }],
          text(),
          7,
        ]);
  const row: Record<string, unknown> = {
    site,
    sitemap,
    url,
    priority: pick([0.5, 0.8, 1, 0, 0.1, 0.000001, 1e-7, 0.123456789012345, 2, -0.5, 123456789012345680000]),
    lastModified: pick([null, '2026-11-20', text()]),
    changeFrequency: pick([null, 'daily', text()]),
    newsStory: nested(),
    images: nested(),
    alternates: nested(),
  };
  if (next() < 0.5 && !plain) row.extensions = nested();
  row.change = pick(['new', 'changed', 'unchanged', null]);
  return row as unknown as PageRow;
}

describe("a page row's COPY line from its JSON text", () => {
  it('is the line of the row parsed, for every text it reads; the rest it leaves to the parse', () => {
    const next = random(33);
    let read = 0;
    for (let i = 0; i < 20_000; i++) {
      const row = rowOf(next);
      const json = JSON.stringify(row);
      const line = copyLineOfJson(json, SITE);
      const parsed = JSON.parse(json) as PageRow;
      if (line === null) continue;
      read++;
      expect(parsed.site).toBe(SITE);
      expect(line).toBe(pageCopyLine(parsed));
    }
    // The plain rows without an escaped character, most of them, are read.
    expect(read).toBeGreaterThan(3_000);
  });

  it('reads plain and removed rows; leaves nested values, another site, missing, extra or reordered keys, an escape to the parse', () => {
    const plain = {
      site: SITE,
      sitemap: `${SITE}a.xml`,
      url: `${SITE}p`,
      priority: 0.5,
      lastModified: '2026-11-20T00:00:00Z',
      changeFrequency: null,
      newsStory: null,
      images: null,
      alternates: null,
      change: 'unchanged',
    };
    expect(copyLineOfJson(JSON.stringify(plain), SITE)).toBe(
      `${SITE}a.xml\t${SITE}p\t0.5\t2026-11-20T00:00:00Z\t\\N\t\\N\t\\N\t\\N\t\\N\tunchanged\t\\N\n`,
    );
    const { change: __, ...listed } = plain;
    const rich = {
      ...listed,
      images: [{ loc: 'i', n: [1, { a: '}' }] }],
      extensions: { v: { t: 'x,y' } },
      change: 'new',
    };
    const removed = { site: SITE, sitemap: `${SITE}a.xml`, url: `${SITE}gone`, change: 'removed' };
    expect(copyLineOfJson(JSON.stringify(removed), SITE)).toBe(
      `${SITE}a.xml\t${SITE}gone\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\tremoved\t\\N\n`,
    );
    // A priority written otherwise than `JSON.stringify` writes it: read as the parse reads it, or not at all.
    for (const text of [
      '1.0',
      '0.50',
      '0.0000001',
      '1e0',
      '-0',
      '0.1234567890123456',
      '0.12345678901234567',
    ]) {
      const json = JSON.stringify(plain).replace('"priority":0.5', `"priority":${text}`);
      const line = copyLineOfJson(json, SITE);
      expect(line === null || line === pageCopyLine(JSON.parse(json))).toBe(true);
    }
    const { changeFrequency: _, ...missing } = plain;
    const { site, sitemap, ...rest } = plain;
    for (const other of [
      rich,
      { ...plain, site: `${SITE}x` },
      missing,
      { ...plain, extra: 1 },
      { sitemap, site, ...rest },
      { ...removed, priority: 0.5, change: 'removed' },
      { ...plain, url: `${SITE}"q"` },
      { ...plain, priority: true },
    ]) {
      expect(copyLineOfJson(JSON.stringify(other), SITE)).toBeNull();
    }
  });
});
