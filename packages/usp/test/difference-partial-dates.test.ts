import { hasCorpus, readCase } from '@usp-ts/conformance';
import { describe, expect, it } from 'vitest';
import { createDefaultRegistry, isPagesSitemap, parseSitemap } from '../src/index.js';

// usp completes partial W3C dates from today's date (dateutil), so its output changes from day to
// day; ours is deterministic: a year means January 1st, a month its first day, a bare time is no date.
describe.skipIf(!hasCorpus())("'xml-lastmod-partial-dates'", () => {
  it('reads partial dates the same way on every day', async () => {
    const c = readCase('xml-lastmod-partial-dates');
    const parsed = await parseSitemap({
      url: c.meta.url!,
      body: c.input!,
      registry: createDefaultRegistry(),
    });
    const sitemap = parsed.sitemap;
    if (!isPagesSitemap(sitemap)) throw new Error(`expected a pages sitemap, got ${sitemap.type}`);
    expect(sitemap.pages.map((p) => [p.url, p.lastModified?.toSourceString() ?? null])).toEqual([
      ['http://example.com/year-month', '2024-05-01T00:00:00'],
      ['http://example.com/year-only', '2024-01-01T00:00:00'],
      ['http://example.com/time-only', null],
    ]);
    expect(parsed.warnings.filter((w) => w.code === 'invalid-date')).toHaveLength(1);
  });
});
