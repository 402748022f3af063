import {
  compareToGolden,
  documentCases,
  documentView,
  itMatchesGoldens,
  parseCase,
  readCase,
} from '@usp-ts/conformance';
import { createRegistry, isPagesSitemap } from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { rss } from '../src/index.js';

const registry = createRegistry([rss()]);
// The RSS document cases (and RSS 1.0, which must stay unclaimed).
const suite = documentCases(
  (i) => readCase(i.name).expected.type === 'PagesRSSSitemap' || i.name.includes('rss'),
);

describe.skipIf(!suite.corpus)('conformance: RSS document cases', () => {
  it('covers the RSS cases of the corpus', () => {
    expect(suite.cases.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        'rss2-feed',
        'rss2-empty',
        'docs-rss2.0',
        'rss2-item-edge-cases',
        'xml-rss1-rdf-unsupported',
      ]),
    );
  });

  itMatchesGoldens(suite, async (c) => documentView(await parseCase(c, registry)));

  it("differs from usp on 'rss2-item-edge-cases' exactly where we do better", async () => {
    expect(suite.differences['rss2-item-edge-cases']).toBeDefined();
    const c = readCase('rss2-item-edge-cases');
    const parsed = await parseCase(c, registry);
    expect(compareToGolden(documentView(parsed), c.expected).ok).toBe(false);
    const pages = isPagesSitemap(parsed.sitemap) ? parsed.sitemap.pages : [];
    expect(
      pages.map((p) => [p.url, p.newsStory?.title, p.newsStory?.publishDate?.toSourceString() ?? null]),
    ).toEqual([
      ['http://example.com/desc-only', 'Description only', null],
      ['http://example.com/bad-date', 'Bad date', null],
      // usp: publish_date "" for an empty <pubDate></pubDate>.
      ['http://example.com/empty-date', 'Empty date', null],
      ['http://example.com/iso-date', 'ISO date', '2024-01-02T03:04:05+00:00'],
      ['http://example.com/no-zone', 'No zone', '2024-01-02T03:04:05'],
      // usp also keeps "  http://example.com/dup  " (raw-text de-duplication) as a second page.
      ['http://example.com/dup', 'Dup first', null],
      // usp decodes entities twice: "http://example.com/?a=1&b=2", "Entities & more".
      ['http://example.com/?a=1&amp;b=2', 'Entities &amp; more', null],
      // usp keeps "/relative" as the page URL.
      ['http://example.com/relative', 'Relative link', null],
      // usp stops at the empty <title></title>: these two are lost there.
      ['http://example.com/aborted', 'Empty title aborts', null],
      ['http://example.com/after-abort', 'After abort', null],
    ]);
    expect(parsed.warnings.map((w) => w.code)).toEqual([
      'missing-field',
      'invalid-date',
      'duplicate-url',
      'duplicate-url',
      'relative-url',
    ]);
  });
});
