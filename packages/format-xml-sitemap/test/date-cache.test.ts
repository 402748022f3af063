import { parseIsoDate, SitemapDate } from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { DateCache, slotOf } from '../src/date-cache.js';
import { run } from './registry.js';

const NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';
const urlset = (body: string) => `<?xml version="1.0"?><urlset xmlns="${NS}">${body}</urlset>`;
const entry = (i: number, lastmod: string) =>
  `<url><loc>http://example.com/${i}</loc><lastmod>${lastmod}</lastmod></url>`;

/** Distinct W3C dates, `count` of them, by day and second. */
function dates(count: number): string[] {
  return Array.from({ length: count }, (_, i) =>
    new SitemapDate(Date.UTC(2024, 0, 1 + (i % 300), 0, 0, i), 60).toSourceString(),
  );
}

describe('DateCache', () => {
  it('gives back a date only for the exact text that was set on its slot', () => {
    // Texts that share a slot: each later one replaces the one before.
    const texts = dates(5000);
    const bySlot = new Map<number, string[]>();
    for (const t of texts) bySlot.set(slotOf(t), [...(bySlot.get(slotOf(t)) ?? []), t]);
    const shared = [...bySlot.values()].find((ts) => ts.length >= 3) as string[];
    expect(shared).toBeDefined();
    const cache = new DateCache();
    const [a, b, c] = shared as [string, string, string];
    const da = parseIsoDate(a) as SitemapDate;
    cache.set(a, da);
    expect(cache.get(a)).toBe(da);
    expect(cache.get(b)).toBeUndefined();
    expect(cache.get(`${a} `)).toBeUndefined();
    const db = parseIsoDate(b) as SitemapDate;
    cache.set(b, db);
    expect(cache.get(b)).toBe(db);
    expect(cache.get(a)).toBeUndefined();
    expect(cache.get(c)).toBeUndefined();
  });
});

describe('xmlSitemap() urlset <lastmod>', () => {
  it('reads each page its own date, in any order, with dates that share a slot and read again', async () => {
    const texts = dates(400);
    const order = Array.from(
      { length: 3000 },
      (_, i) => texts[(i * 7919 + (i >> 3)) % texts.length] as string,
    );
    const r = await run(urlset(order.map((t, i) => entry(i, t)).join('')));
    expect(r.warnings).toEqual([]);
    expect(r.pages).toHaveLength(order.length);
    for (let i = 0; i < order.length; i++) {
      const d = r.pages[i]?.lastModified as SitemapDate;
      expect(d.toSourceString()).toBe(order[i]);
      expect(d).toEqual(parseIsoDate(order[i] as string));
    }
    // A date read once is shared by its pages (immutable), not read again a page.
    const first = new Map<string, SitemapDate>();
    let shared = 0;
    for (let i = 0; i < order.length; i++) {
      const d = r.pages[i]?.lastModified as SitemapDate;
      const before = first.get(order[i] as string);
      if (before === undefined) first.set(order[i] as string, d);
      else if (before === d) shared++;
    }
    expect(shared).toBeGreaterThan(1000);
  });

  it('warns about an invalid date each time it comes, and keeps no view of the document', async () => {
    const r = await run(
      urlset(
        [
          entry(1, '2024-13-01'),
          entry(2, '2024-01-02'),
          entry(3, '2024-13-01'),
          entry(4, ' 2024-01-02 '),
        ].join(''),
      ),
    );
    expect(r.codes).toEqual(['invalid-date', 'invalid-date']);
    expect(r.pages.map((p) => p.lastModified?.toSourceString() ?? null)).toEqual([
      null,
      '2024-01-02T00:00:00',
      null,
      '2024-01-02T00:00:00',
    ]);
  });
});
