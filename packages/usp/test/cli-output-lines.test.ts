import { type Page, pageToJSON, SitemapDate } from '@usp-ts/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvLine, ndjsonLine, stripUrl } from '../src/cli/output.js';

// The NDJSON and CSV lines are written out by hand for ordinary pages. They must stay byte for
// byte what the object-building formatters printed: those are kept here as the reference.

function referenceNdjsonLine(page: Page, sitemapUrl: string, stripPrefix = ''): string {
  const json = pageToJSON(page);
  return JSON.stringify({
    sitemap: stripUrl(sitemapUrl, stripPrefix),
    ...json,
    url: stripUrl(json.url, stripPrefix),
  });
}

function referenceCsvField(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  const s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

function referenceCsvLine(page: Page, sitemapUrl: string, stripPrefix = ''): string {
  const news = page.newsStory;
  return [
    stripUrl(sitemapUrl, stripPrefix),
    stripUrl(page.url, stripPrefix),
    page.priority,
    page.lastModified?.toSourceString(),
    page.changeFrequency,
    news?.title,
    news?.publishDate?.toSourceString(),
    news?.publicationName,
    news?.publicationLanguage,
    page.images
      ?.map((i) => i.loc)
      .filter((l) => l !== null)
      .join(' '),
    page.alternates?.map((a) => `${a.hreflang}=${a.href}`).join(' '),
    page.extensions === undefined ? undefined : JSON.stringify(page.extensions),
  ]
    .map(referenceCsvField)
    .join(',');
}

// Any UTF-16 code unit: lone surrogates, controls, quotes, commas, newlines, U+2028.
const odd = fc.string({
  unit: fc.oneof(
    fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
    fc.constantFrom('"', ',', '\n', '\r', '\\', '\u2028', '\u007f', '\u0085', 'é', '😀', '/', ' '),
  ),
  maxLength: 30,
});
const origin = 'https://ex.com/';
const url = fc.oneof(
  odd.map((s) => `${origin}${s}`),
  odd,
  fc.constant(origin),
);
const date = fc.oneof(
  fc.constant(null),
  fc
    .tuple(
      fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }),
      fc.option(fc.integer({ min: -1440, max: 1440 })),
      fc.integer({ min: 0, max: 999 }),
    )
    .map(([ms, off, us]) => new SitemapDate(ms, off, us)),
);
const plainPage = fc.record({
  url,
  priority: fc.oneof(
    fc.double({ min: 0, max: 1, noNaN: true }),
    fc.constantFrom(0.5, 1, 0, -0, 0.1 + 0.2, 1e-7, Number.NaN, Number.POSITIVE_INFINITY),
  ),
  lastModified: date,
  changeFrequency: fc.oneof(
    fc.constant(null),
    fc.constantFrom('always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never'),
  ),
  newsStory: fc.constant(null),
  images: fc.constant(null),
  alternates: fc.constant(null),
}) as fc.Arbitrary<Page>;
// Pages the general path prints: news, images, alternates, extension data.
const richPage = fc
  .tuple(plainPage, odd, date, fc.boolean(), fc.boolean(), fc.boolean())
  .map(([p, text, publishDate, news, images, ext]): Page => {
    const page: Page = {
      ...p,
      newsStory: news
        ? {
            title: text,
            publishDate,
            publicationName: text,
            publicationLanguage: null,
            access: null,
            genres: [text],
            keywords: [],
            stockTickers: [],
          }
        : null,
      images: images ? [{ loc: text, caption: null, geoLocation: null, title: text, license: null }] : null,
      alternates: news || images ? null : [{ hreflang: 'de', href: text }],
    };
    return ext ? { ...page, extensions: { x: [text, publishDate] } as unknown as Page['extensions'] } : page;
  });
const sitemap = fc.oneof(url, fc.constant(`${origin}sitemap.xml`));
const prefix = fc.constantFrom('', origin, 'https://ex.com');

describe('hand-written NDJSON and CSV lines', () => {
  it('print exactly what the object-building formatters printed, on many generated pages', () => {
    fc.assert(
      fc.property(fc.oneof(plainPage, richPage), sitemap, prefix, (page, s, p) => {
        expect(ndjsonLine(page, s, p)).toBe(referenceNdjsonLine(page, s, p));
        expect(csvLine(page, s, p)).toBe(referenceCsvLine(page, s, p));
      }),
      { numRuns: 5_000 },
    );
  });

  it('keep the bytes when the sitemap changes between pages (the quoted URL is remembered)', () => {
    const page: Page = {
      url: `${origin}p`,
      priority: 0.8,
      lastModified: new SitemapDate(Date.UTC(2024, 0, 2), 60),
      changeFrequency: 'daily',
      newsStory: null,
      images: null,
      alternates: null,
    };
    for (const s of [`${origin}a.xml`, `${origin}b.xml`, `${origin}a.xml`]) {
      for (const p of ['', origin]) expect(ndjsonLine(page, s, p)).toBe(referenceNdjsonLine(page, s, p));
    }
  });
});
