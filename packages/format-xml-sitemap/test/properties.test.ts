import { pageToJSON } from '@usp-ts/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CANONICAL, type EntryModel, renderUrlset, styleArb, urlsetArb } from './generate.js';
import { parse } from './registry.js';

const encoder = new TextEncoder();

async function pagesOf(body: string | Uint8Array) {
  const doc = await parse(body);
  return [...doc.sitemap.allPages()].map(pageToJSON);
}

/** The byte offset just after each entry's `</url>`. */
function byteEnds(xml: string, ends: number[]): number[] {
  return ends.map((end) => encoder.encode(xml.slice(0, end)).length);
}

const FIXED: EntryModel[] = [
  {
    path: 'a',
    priority: '0.8',
    changefreq: 'daily',
    lastmod: '2024-01-02T03:04:05+02:00',
    news: { title: 'Été à Paris 😀', date: '2024-01-02', name: 'A &amp; B', keywords: 'a, b' },
    images: [{ loc: 'http://example.com/i.jpg', caption: '日本語の記事' }],
    alternates: [{ hreflang: 'fr-FR', href: 'http://example.com/fr' }],
  },
  { path: 'b', priority: null, changefreq: null, lastmod: null, news: null, images: [], alternates: [] },
  {
    path: 'c',
    priority: '0.1',
    changefreq: null,
    lastmod: '2024-01-02',
    news: null,
    images: [],
    alternates: [{ hreflang: 'x-default', href: 'http://example.com/' }],
  },
];

describe('property: a urlset cut at any byte keeps exactly the entries completed before the cut', () => {
  it('at every byte of a small document', async () => {
    const { xml, ends } = renderUrlset(FIXED);
    const bytes = encoder.encode(xml);
    const full = await pagesOf(bytes);
    expect(full).toHaveLength(FIXED.length);
    const byteEnd = byteEnds(xml, ends);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const complete = byteEnd.filter((end) => end <= cut).length;
      const pages = await pagesOf(bytes.slice(0, cut));
      if (pages.length !== complete || JSON.stringify(pages) !== JSON.stringify(full.slice(0, complete))) {
        expect.fail(`cut at byte ${cut}: ${pages.length} pages, expected the first ${complete}`);
      }
    }
  });

  it('at random bytes of random documents', async () => {
    await fc.assert(
      fc.asyncProperty(
        urlsetArb,
        styleArb,
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (entries, style, at) => {
          const { xml, ends } = renderUrlset(entries, style);
          const bytes = encoder.encode(xml);
          const cut = Math.floor(at * bytes.length);
          const complete = byteEnds(xml, ends).filter((end) => end <= cut).length;
          const full = await pagesOf(bytes);
          const pages = await pagesOf(bytes.slice(0, cut));
          expect(pages).toEqual(full.slice(0, complete));
        },
      ),
      { seed: 20240501, numRuns: 150 },
    );
  });
});

describe('property: namespace prefixes and where they are declared do not change the result', () => {
  it('gives the canonical result for any prefixes', async () => {
    await fc.assert(
      fc.asyncProperty(urlsetArb, styleArb, async (entries, style) => {
        const canonical = await pagesOf(renderUrlset(entries, CANONICAL).xml);
        expect(canonical).toHaveLength(entries.length);
        expect(await pagesOf(renderUrlset(entries, style).xml)).toEqual(canonical);
      }),
      { seed: 1337, numRuns: 150 },
    );
  });

  it('reads the generated fields (the canonical rendering is what the model says)', async () => {
    const pages = await pagesOf(renderUrlset(FIXED).xml);
    expect(pages[0]).toMatchObject({
      url: 'http://example.com/a',
      priority: 0.8,
      changeFrequency: 'daily',
      lastModified: '2024-01-02T03:04:05+02:00',
      newsStory: { title: 'Été à Paris 😀', publicationName: 'A & B', keywords: ['a', 'b'] },
      images: [{ loc: 'http://example.com/i.jpg', caption: '日本語の記事' }],
      alternates: [{ hreflang: 'fr-FR', href: 'http://example.com/fr' }],
    });
    expect(pages[2].alternates).toEqual([{ hreflang: 'x-default', href: 'http://example.com/' }]);
  });
});
