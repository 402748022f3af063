import type { PageJSON, SitemapJSON } from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { compareToGolden, datesEqual, formatDifferences } from '../src/compare.js';
import { type CorpusNode, type CorpusPage, toAlternatesForm, toCorpusForm } from '../src/corpus-form.js';

function corpusPage(url: string, over: Partial<CorpusPage> = {}): CorpusPage {
  return {
    url,
    priority: 0.5,
    last_modified: null,
    change_frequency: null,
    news_story: null,
    images: null,
    ...over,
  };
}

function ourPage(url: string, over: Partial<PageJSON> = {}): PageJSON {
  return {
    url,
    priority: 0.5,
    lastModified: null,
    changeFrequency: null,
    newsStory: null,
    images: null,
    alternates: null,
    ...over,
  };
}

const pages = (url: string, ps: CorpusPage[]): CorpusNode => ({ type: 'PagesXMLSitemap', url, pages: ps });

describe('toCorpusForm', () => {
  it('maps every camelCase key of the project JSON onto the corpus names', () => {
    const ours: SitemapJSON = {
      type: 'IndexRobotsTxtSitemap',
      url: 'http://a.com/robots.txt',
      subSitemaps: [
        {
          type: 'PagesXMLSitemap',
          url: 'http://a.com/s.xml',
          lastModified: '2024-01-01T00:00:00',
          pages: [
            ourPage('http://a.com/1', {
              priority: 0.8,
              lastModified: '2024-01-02T03:04:05+02:00',
              changeFrequency: 'daily',
              newsStory: {
                title: 'T',
                publishDate: '2024-01-01T00:00:00+00:00',
                publicationName: 'N',
                publicationLanguage: 'en',
                access: 'Subscription',
                genres: ['Blog'],
                keywords: ['a', 'b'],
                stockTickers: ['X:Y'],
              },
              images: [
                { loc: 'http://a.com/i.png', caption: 'c', geoLocation: 'g', title: 't', license: 'l' },
              ],
              alternates: [{ hreflang: 'fr', href: 'http://a.com/fr' }],
              extensions: {},
            }),
          ],
        },
        { type: 'InvalidSitemap', url: 'http://a.com/x.xml', reason: 'Un-fetched child sitemap' },
      ],
    };
    expect(toCorpusForm(ours)).toEqual({
      type: 'IndexRobotsTxtSitemap',
      url: 'http://a.com/robots.txt',
      sub_sitemaps: [
        {
          type: 'PagesXMLSitemap',
          url: 'http://a.com/s.xml',
          pages: [
            {
              url: 'http://a.com/1',
              priority: 0.8,
              last_modified: '2024-01-02T03:04:05+02:00',
              change_frequency: 'daily',
              news_story: {
                title: 'T',
                publish_date: '2024-01-01T00:00:00+00:00',
                publication_name: 'N',
                publication_language: 'en',
                access: 'Subscription',
                genres: ['Blog'],
                keywords: ['a', 'b'],
                stock_tickers: ['X:Y'],
              },
              images: [
                { loc: 'http://a.com/i.png', caption: 'c', geo_location: 'g', title: 't', license: 'l' },
              ],
              alternates: [['fr', 'http://a.com/fr']],
            },
          ],
        },
        { type: 'InvalidSitemap', url: 'http://a.com/x.xml', reason: 'Un-fetched child sitemap' },
      ],
    });
  });

  it('is idempotent on a tree already in corpus form', () => {
    const tree = toCorpusForm({
      type: 'PagesRSSSitemap',
      url: 'http://a.com/f',
      pages: [ourPage('http://a.com/1')],
    });
    expect(toCorpusForm(tree)).toEqual(tree);
  });

  it('lists alternates in all_pages order', () => {
    const tree: SitemapJSON = {
      type: 'IndexXMLSitemap',
      url: 'http://a.com/i',
      subSitemaps: [
        { type: 'PagesXMLSitemap', url: 'http://a.com/1', pages: [ourPage('http://a.com/p1')] },
        {
          type: 'PagesXMLSitemap',
          url: 'http://a.com/2',
          pages: [
            ourPage('http://a.com/p2', { alternates: [{ hreflang: 'x-default', href: 'http://a.com/' }] }),
          ],
        },
      ],
    };
    expect(toAlternatesForm(tree)).toEqual([
      { url: 'http://a.com/p1', alternates: null },
      { url: 'http://a.com/p2', alternates: [['x-default', 'http://a.com/']] },
    ]);
  });
});

describe('compareToGolden', () => {
  const golden = pages('http://a.com/s.xml', [
    corpusPage('http://a.com/1', { priority: 0.3, last_modified: '2024-01-01T12:00:00+02:00' }),
    corpusPage('http://a.com/2', { last_modified: '2024-01-01T12:00:00' }),
  ]);

  it('accepts an identical tree', () => {
    expect(compareToGolden(golden, golden)).toEqual({ ok: true, differences: [] });
  });

  it('accepts the same tree in the project JSON form', () => {
    const ours: SitemapJSON = {
      type: 'PagesXMLSitemap',
      url: 'http://a.com/s.xml',
      pages: [
        ourPage('http://a.com/1', { priority: 0.3, lastModified: '2024-01-01T12:00:00+02:00' }),
        ourPage('http://a.com/2', { lastModified: '2024-01-01T12:00:00' }),
      ],
    };
    expect(compareToGolden(ours, golden).ok).toBe(true);
  });

  it('fails on a different URL, naming the path', () => {
    const actual = pages('http://a.com/s.xml', [
      corpusPage('http://a.com/1x', golden.pages![0]),
      golden.pages![1],
    ]);
    actual.pages![0] = { ...golden.pages![0], url: 'http://a.com/1x' };
    const r = compareToGolden(actual, golden);
    expect(r.ok).toBe(false);
    expect(r.differences).toHaveLength(1);
    expect(r.differences[0].path).toBe('$.pages[0].url');
    expect(formatDifferences(r)).toContain('http://a.com/1x');
  });

  it('compares numbers numerically', () => {
    const g = pages('u', [corpusPage('p', { priority: 1 })]);
    expect(compareToGolden(pages('u', [corpusPage('p', { priority: 1.0 })]), g).ok).toBe(true);
    expect(
      compareToGolden(
        pages('u', [corpusPage('p', { priority: 0 })]),
        pages('u', [corpusPage('p', { priority: -0 })]),
      ).ok,
    ).toBe(true);
    expect(compareToGolden(pages('u', [corpusPage('p', { priority: 0.9 })]), g).ok).toBe(false);
    // A priority kept as text is not the number.
    expect(compareToGolden(pages('u', [corpusPage('p', { priority: '1' as unknown as number })]), g).ok).toBe(
      false,
    );
  });

  it('compares dates by instant when both have an offset, by wall clock when neither has', () => {
    expect(datesEqual('2024-01-01T10:00:00+00:00', '2024-01-01T12:00:00+02:00')).toBe(true);
    expect(datesEqual('2024-01-01T10:00:00Z', '2024-01-01T10:00:00+00:00')).toBe(true);
    expect(datesEqual('2024-01-01T10:00:00.500000+00:00', '2024-01-01T10:00:00.5+00:00')).toBe(true);
    expect(datesEqual('2024-01-01T10:00:00.000001+00:00', '2024-01-01T10:00:00+00:00')).toBe(false);
    expect(datesEqual('2024-01-01T12:00:00', '2024-01-01T12:00:00')).toBe(true);
    expect(datesEqual('2024-01-01T12:00:00', '2024-01-01T12:00:00+00:00')).toBe(false);
    expect(datesEqual('2024-01-01T12:00:00+00:00', '2024-01-01T12:00:00')).toBe(false);
    expect(datesEqual('2024-01-01T12:00:00+01:00', '2024-01-01T12:00:00+00:00')).toBe(false);
    expect(datesEqual('2024-01-01T12:00:00+05:30:15', '2024-01-01T06:29:45+00:00')).toBe(true);
    const g = pages('u', [corpusPage('p', { last_modified: '2024-01-01T12:00:00+02:00' })]);
    expect(
      compareToGolden(pages('u', [corpusPage('p', { last_modified: '2024-01-01T10:00:00+00:00' })]), g).ok,
    ).toBe(true);
    expect(
      compareToGolden(pages('u', [corpusPage('p', { last_modified: '2024-01-01T12:00:00' })]), g).ok,
    ).toBe(false);
    expect(compareToGolden(pages('u', [corpusPage('p', { last_modified: null })]), g).ok).toBe(false);
  });

  it('keeps "" and null apart (quirk Q10)', () => {
    const g = pages('u', [corpusPage('p', { last_modified: '' })]);
    expect(compareToGolden(pages('u', [corpusPage('p', { last_modified: '' })]), g).ok).toBe(true);
    expect(compareToGolden(pages('u', [corpusPage('p', { last_modified: null })]), g).ok).toBe(false);
  });

  it('skips date fields only when told to (depends_on_current_date)', () => {
    const g = pages('u', [corpusPage('p', { last_modified: '2024-05-03T00:00:00' })]);
    const a = pages('u', [corpusPage('p', { last_modified: '2024-05-01T00:00:00' })]);
    expect(compareToGolden(a, g).ok).toBe(false);
    expect(compareToGolden(a, g, { ignoreDates: true }).ok).toBe(true);
    // Other fields are still compared.
    expect(compareToGolden(pages('u', [corpusPage('q', a.pages![0])]), g, { ignoreDates: true }).ok).toBe(
      true,
    );
    const other = pages('u', [{ ...a.pages![0], url: 'q' }]);
    expect(compareToGolden(other, g, { ignoreDates: true }).ok).toBe(false);
  });

  it('compares reasons loosely but requires a non-empty one', () => {
    const g: CorpusNode = { type: 'InvalidSitemap', url: 'u', reason: "Recursion detected ... {'a', 'b'}" };
    expect(compareToGolden({ type: 'InvalidSitemap', url: 'u', reason: 'cycle' }, g).ok).toBe(true);
    expect(compareToGolden({ type: 'InvalidSitemap', url: 'u', reason: ' ' }, g).ok).toBe(false);
    expect(compareToGolden({ type: 'InvalidSitemap', url: 'u' }, g).ok).toBe(false);
    expect(compareToGolden({ type: 'PagesXMLSitemap', url: 'u', reason: 'x', pages: [] }, g).ok).toBe(false);
  });

  it('ignores keys the golden does not have but reports missing ones', () => {
    const g = pages('u', [corpusPage('p')]);
    const extra = {
      ...g,
      lastModified: 'x',
      pages: [{ ...corpusPage('p'), alternates: [['a', 'b']], extensions: {} }],
    };
    expect(compareToGolden(extra as unknown as CorpusNode, g).ok).toBe(true);
    const { images: _drop, ...noImages } = corpusPage('p');
    const r = compareToGolden({ type: 'PagesXMLSitemap', url: 'u', pages: [noImages as CorpusPage] }, g);
    expect(r.ok).toBe(false);
    expect(r.differences[0].path).toBe('$.pages[0].images');
  });

  it('keeps lists ordered and counts items', () => {
    const g = pages('u', [corpusPage('1'), corpusPage('2')]);
    expect(compareToGolden(pages('u', [corpusPage('2'), corpusPage('1')]), g).ok).toBe(false);
    const r = compareToGolden(pages('u', [corpusPage('1')]), g);
    expect(r.ok).toBe(false);
    expect(r.differences.map((d) => d.message)).toContain('expected 2 items, got 1');
    const news = (keywords: string[]): CorpusPage =>
      corpusPage('p', {
        news_story: {
          title: 't',
          publish_date: null,
          publication_name: null,
          publication_language: null,
          access: null,
          genres: [],
          keywords,
          stock_tickers: [],
        },
      });
    expect(compareToGolden(pages('u', [news(['b', 'a'])]), pages('u', [news(['a', 'b'])])).ok).toBe(false);
  });

  describe('site cases', () => {
    const robots: CorpusNode = {
      type: 'IndexRobotsTxtSitemap',
      url: 'http://127.0.0.1:PORT/robots.txt',
      sub_sitemaps: [],
    };
    const k1 = pages('http://127.0.0.1:PORT/sitemap.xml', [corpusPage('http://127.0.0.1:PORT/a')]);
    const k2 = pages('http://127.0.0.1:PORT/sitemap_index.xml', [corpusPage('http://127.0.0.1:PORT/b')]);
    const root = (subs: CorpusNode[]): CorpusNode => ({
      type: 'IndexWebsiteSitemap',
      url: 'http://127.0.0.1:PORT/',
      sub_sitemaps: subs,
    });
    const withPort = (n: CorpusNode): CorpusNode =>
      JSON.parse(JSON.stringify(n).replaceAll('127.0.0.1:PORT', '127.0.0.1:4567'));

    it('fills the PORT placeholder in the actual tree', () => {
      const g = root([robots, k1]);
      expect(compareToGolden(withPort(g), g, { siteCase: true, port: 4567 }).ok).toBe(true);
      expect(compareToGolden(withPort(g), g, { siteCase: true, port: 4568 }).ok).toBe(false);
      expect(compareToGolden(withPort(g), g, { siteCase: true }).ok).toBe(false);
    });

    it('compares known-path children as a multiset after the robots.txt child', () => {
      const g = root([robots, k1, k2]);
      expect(compareToGolden(root([robots, k2, k1]), g, { siteCase: true }).ok).toBe(true);
      // Without siteCase the order counts.
      expect(compareToGolden(root([robots, k2, k1]), g).ok).toBe(false);
      // robots.txt stays in place.
      expect(compareToGolden(root([k1, robots, k2]), g, { siteCase: true }).ok).toBe(false);
      // A multiset, not a set: a duplicate must appear as often as in the golden.
      expect(compareToGolden(root([robots, k1, k1]), root([robots, k1, k2]), { siteCase: true }).ok).toBe(
        false,
      );
      expect(compareToGolden(root([robots, k1, k1]), root([robots, k1, k1]), { siteCase: true }).ok).toBe(
        true,
      );
      expect(compareToGolden(root([robots, k1]), g, { siteCase: true }).ok).toBe(false);
      expect(compareToGolden(root([robots, k1, k2, k2]), g, { siteCase: true }).ok).toBe(false);
      expect(compareToGolden(root([k2, k1]), root([k1, k2]), { siteCase: true }).ok).toBe(true);
    });

    it('reports what differs inside a known-path child', () => {
      const changed = pages(k1.url, [corpusPage('http://127.0.0.1:PORT/zzz')]);
      const r = compareToGolden(root([robots, k2, changed]), root([robots, k1, k2]), { siteCase: true });
      expect(r.ok).toBe(false);
      expect(formatDifferences(r)).toContain('zzz');
    });

    it('checks expected_alternates exactly', () => {
      const g = root([robots, k1]);
      const alt = [{ url: 'http://127.0.0.1:PORT/a', alternates: null }];
      expect(compareToGolden(g, g, { siteCase: true, expectedAlternates: alt }).ok).toBe(true);
      const withAlt = [
        {
          url: 'http://127.0.0.1:PORT/a',
          alternates: [['fr', 'http://127.0.0.1:PORT/fr']] as [string, string][],
        },
      ];
      expect(compareToGolden(g, g, { siteCase: true, expectedAlternates: withAlt }).ok).toBe(false);
    });
  });
});
