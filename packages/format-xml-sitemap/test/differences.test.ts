import { documentView, hasCorpus, readCase, toAlternatesForm, toCorpusForm } from '@usp-ts/conformance';
import { describe, expect, it } from 'vitest';
import { parse } from './registry.js';

// Where we deliberately do better than usp 1.8.1: each case of conformance-differences.json that
// this format owns, run on the corpus input, with our result spelled out.
const corpus = hasCorpus();

async function parseCase(name: string) {
  const c = readCase(name);
  const parsed = await parse(c.input!, { url: c.meta.url!, headers: c.meta.headers });
  const tree = toCorpusForm(documentView(parsed));
  return { parsed, tree, pages: tree.pages ?? [], codes: parsed.warnings.map((w) => w.code) };
}

describe.skipIf(!corpus)('differences from usp on the corpus inputs', () => {
  it("'xml-urlset-stray-element-stops-parsing': a stray <generator> is skipped, the pages after it are read", async () => {
    const { pages, codes } = await parseCase('xml-urlset-stray-element-stops-parsing');
    expect(pages.map((p) => p.url)).toEqual(['http://example.com/lost-1', 'http://example.com/lost-2']);
    expect(codes).toEqual(['unknown-element']);
  });

  it("'xml-urlset-empty-loc-stops-parsing': the entry with an empty <loc> is dropped, the next one is read", async () => {
    const { pages, codes } = await parseCase('xml-urlset-empty-loc-stops-parsing');
    expect(pages.map((p) => p.url)).toEqual(['http://example.com/kept', 'http://example.com/lost']);
    expect(codes).toEqual(['missing-field']);
  });

  it("'xml-urlset-duplicate-and-unvalidated-locs': non-http locs dropped, duplicates found after stripping", async () => {
    const { pages, codes } = await parseCase('xml-urlset-duplicate-and-unvalidated-locs');
    expect(pages.map((p) => [p.url, p.priority])).toEqual([
      ['http://example.com/a', 0.1],
      ['http://example.com/b', 0.5],
    ]);
    expect(codes).toEqual(['duplicate-url', 'duplicate-url', 'invalid-url', 'invalid-url', 'missing-field']);
  });

  it("'xml-html-double-unescape': entities are decoded once", async () => {
    const { pages } = await parseCase('xml-html-double-unescape');
    expect(pages.map((p) => p.url)).toEqual([
      'http://example.com/?a=1&amp;b=2',
      'http://example.com/?x=1&copy=2&not=3&para=4&reg',
      'http://example.com/news',
    ]);
    expect(pages[2].news_story?.title).toBe('&lt;b&gt;Bold&lt;/b&gt; &eacute;t&eacute;');
  });

  it("'xml-empty-element-takes-preceding-text': an empty <loc/> stays empty (entry dropped), <priority/> and <changefreq/> keep their defaults", async () => {
    const { pages, codes } = await parseCase('xml-empty-element-takes-preceding-text');
    expect(pages).toHaveLength(1);
    expect(pages[0]).toMatchObject({ url: 'http://example.com/p', priority: 0.5, change_frequency: null });
    expect(codes).toEqual(['missing-field', 'invalid-priority']);
  });

  it('\'xml-empty-elements-yield-empty-strings\': empty elements are null, never ""', async () => {
    const { pages } = await parseCase('xml-empty-elements-yield-empty-strings');
    expect(pages.map((p) => p.last_modified)).toEqual([null, null, null]);
    expect(pages[2].news_story).toMatchObject({
      title: 'T',
      publication_name: null,
      publication_language: null,
      access: null,
    });
  });

  it("'xml-no-namespace-drops-hreflang': alternates survive a urlset without a namespace", async () => {
    const { tree } = await parseCase('xml-no-namespace-drops-hreflang');
    expect(toAlternatesForm(tree)).toEqual([
      { url: 'http://example.com/en', alternates: [['fr', 'http://example.com/fr']] },
    ]);
  });

  it("'xml-index-edge-cases': only <sitemap><loc> counts, relative locs are resolved, entities decoded once", async () => {
    const { parsed, codes } = await parseCase('xml-index-edge-cases');
    expect(parsed.children.map((c) => c.url)).toEqual([
      'http://example.com/a.xml',
      'http://example.com/relative.xml',
      'http://example.com/c.xml?x=1&amp;y=2',
      'http://example.com/index.xml',
    ]);
    expect(codes).toEqual(['duplicate-url', 'relative-url', 'invalid-url', 'unknown-element']);
  });

  it("'xml-news-fields-edge-cases': genres are read and empty keyword items dropped", async () => {
    const { pages } = await parseCase('xml-news-fields-edge-cases');
    expect(pages[0].news_story).toEqual({
      title: 'Title 1',
      publish_date: '2024-01-02T03:04:05+01:00',
      publication_name: 'Pub &amp; Co',
      publication_language: 'en',
      access: 'Subscription',
      genres: ['PressRelease', 'Blog'],
      keywords: ['a', 'b', 'c', 'd'],
      stock_tickers: ['NASDAQ:A', 'NYSE:B'],
    });
    expect(pages.slice(1).map((p) => p.news_story)).toEqual([null, null, null]);
  });

  it("'xml-image-fields-raw': image fields are stripped like every other value", async () => {
    const { pages, codes } = await parseCase('xml-image-fields-raw');
    expect(pages[0].images).toEqual([
      {
        loc: 'http://example.com/i.jpg',
        caption: 'Cap &amp; tion',
        geo_location: null,
        title: null,
        license: null,
      },
      { loc: null, caption: null, geo_location: null, title: 'Image without loc', license: null },
    ]);
    expect(codes).toEqual(['missing-field']);
  });
});
