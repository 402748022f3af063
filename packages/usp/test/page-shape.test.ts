// One page with every field set, through each place that knows a page's fields by name: core's
// JSON form, the CLI's NDJSON and CSV lines (their hand-written fast paths too), the temp-file
// store's JSON line, its plain records and the codec that carries pages across threads. A field
// added to `Page` fails to compile here until it has its row in FIELDS and the document below
// sets it; then every place that drops it fails a test.
import {
  createRegistry,
  type Page,
  pageToJSON,
  parseDocument,
  SitemapDate,
  type XmlExtension,
} from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { CSV_HEADER, csvLine, ndjsonLine } from '../src/cli/output.js';
import { decodePages, encodePages } from '../src/pages/codec.js';
import { decodePage, encodePage, filePageStore } from '../src/pages/file-store.js';
import { decodePlain, RecordBuffer } from '../src/pages/records.js';
import { defaultPlugins } from '../src/plugins/defaults.js';

declare module '@usp-ts/core' {
  interface PageExtensions {
    rating?: { stars: number; checked: SitemapDate };
  }
}

/** Every field of a page, in the order of its JSON form: one row a field. */
const FIELDS = {
  url: true,
  priority: true,
  lastModified: true,
  changeFrequency: true,
  newsStory: true,
  images: true,
  alternates: true,
  extensions: true,
} satisfies Record<keyof Page, true>;

const RATING_NS = 'https://rating.example/ns';

/** A third party's extension, written as a plugin author would: `<rating:stars>`, `<rating:checked>`. */
const rating: XmlExtension = {
  name: 'rating',
  namespaces: [RATING_NS],
  create: () => {
    let stars = 0;
    let checked: SitemapDate | null = null;
    return {
      startEntry() {
        stars = 0;
        checked = null;
      },
      open() {},
      close(el, text) {
        if (el.local === 'stars') stars = Number(text);
        if (el.local === 'checked') checked = new SitemapDate(Date.parse(text), 0);
      },
      endEntry(draft) {
        if (checked !== null) draft.extensions = { ...draft.extensions, rating: { stars, checked } };
      },
    };
  },
};

const DOCUMENT = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
  xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"
  xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
  xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"
  xmlns:xhtml="http://www.w3.org/1999/xhtml"
  xmlns:rating="${RATING_NS}">
<url>
  <loc>https://example.com/a?b=1&amp;c=ü</loc>
  <lastmod>2024-05-06T09:08:09.000456+02:00</lastmod>
  <changefreq>weekly</changefreq>
  <priority>0.55555</priority>
  <news:news>
    <news:publication><news:name>Paper, "daily"</news:name><news:language>en</news:language></news:publication>
    <news:access>Subscription</news:access>
    <news:genres>Blog, OpEd</news:genres>
    <news:publication_date>2024-01-01</news:publication_date>
    <news:title>Title "quoted"</news:title>
    <news:keywords>a, b</news:keywords>
    <news:stock_tickers>NASDAQ:A</news:stock_tickers>
  </news:news>
  <image:image>
    <image:loc>https://example.com/i.png</image:loc>
    <image:caption>C</image:caption>
    <image:geo_location>Here</image:geo_location>
    <image:title>T</image:title>
    <image:license>https://example.com/l</image:license>
  </image:image>
  <xhtml:link rel="alternate" hreflang="de" href="https://example.com/de"/>
  <video:video>
    <video:thumbnail_loc>https://example.com/t.jpg</video:thumbnail_loc>
    <video:title>V</video:title>
    <video:description>D</video:description>
    <video:content_loc>https://example.com/v.mp4</video:content_loc>
    <video:publication_date>2020-02-01T19:00:00-05:00</video:publication_date>
  </video:video>
  <rating:stars>4</rating:stars>
  <rating:checked>2024-02-03T04:05:06Z</rating:checked>
</url>
</urlset>`;

const SITEMAP = 'https://example.com/sitemap.xml';

async function fullPage(): Promise<Page> {
  const pages: Page[] = [];
  await parseDocument({
    url: SITEMAP,
    body: DOCUMENT,
    registry: createRegistry(defaultPlugins({ extensions: [rating] })),
    onPages: (batch) => {
      pages.push(...batch);
    },
  });
  expect(pages).toHaveLength(1);
  return pages[0];
}

/** The page with only its sitemaps.org fields: what the fast paths and the plain records cover. */
function plainOf(page: Page): Page {
  const { extensions: _, ...rest } = page;
  return { ...rest, newsStory: null, images: null, alternates: null };
}

describe('one page shape, every field set', () => {
  it('the document sets every field, extensions from Video and a third party', async () => {
    const page = await fullPage();
    for (const field of Object.keys(FIELDS) as (keyof Page)[]) {
      expect(page[field], field).not.toBeNull();
      expect(page[field], field).not.toBeUndefined();
    }
    expect(Object.keys(page.extensions ?? {}).sort()).toEqual(['rating', 'videos']);
    expect(page.extensions?.rating?.checked).toBeInstanceOf(SitemapDate);
  });

  it("core's JSON form has every field, in the model's order", async () => {
    const page = await fullPage();
    const json = pageToJSON(page);
    expect(Object.keys(json)).toEqual(Object.keys(FIELDS));
    expect(json.lastModified).toBe('2024-05-06T09:08:09.000456+02:00');
    expect(json.newsStory?.publishDate).toBe(page.newsStory?.publishDate?.toSourceString());
    expect(json.extensions?.rating).toEqual({ stars: 4, checked: '2024-02-03T04:05:06+00:00' });
  });

  it('an NDJSON line is the sitemap and the JSON form, on the general and the fast path', async () => {
    const page = await fullPage();
    for (const p of [page, plainOf(page)]) {
      expect(ndjsonLine(p, SITEMAP)).toBe(JSON.stringify({ sitemap: SITEMAP, ...pageToJSON(p) }));
    }
  });

  it('a CSV row has a column for every field, on the general and the fast path', async () => {
    const page = await fullPage();
    expect(CSV_HEADER).toBe(
      'sitemap,url,priority,lastModified,changeFrequency,newsTitle,newsPublishDate,newsPublicationName,' +
        'newsPublicationLanguage,images,alternates,extensions',
    );
    expect(csvLine(page, SITEMAP)).toBe(
      `${SITEMAP},https://example.com/a?b=1&c=ü,0.55555,2024-05-06T09:08:09.000456+02:00,weekly,` +
        `"Title ""quoted""",2024-01-01T00:00:00,"Paper, ""daily""",en,https://example.com/i.png,de=https://example.com/de,` +
        `"${JSON.stringify(page.extensions).replaceAll('"', '""')}"`,
    );
    const plain = plainOf(page);
    const fast = csvLine(plain, SITEMAP);
    expect(fast).toBe(
      `${SITEMAP},https://example.com/a?b=1&c=ü,0.55555,2024-05-06T09:08:09.000456+02:00,weekly,,,,,,,`,
    );
    // Empty lists take the general path and write the same empty columns.
    expect(csvLine({ ...plain, images: [], alternates: [] }, SITEMAP)).toBe(fast);
  });

  it("the temp-file store's JSON line and its store give the page back, dates as dates", async () => {
    const page = await fullPage();
    expect(decodePage(encodePage(page))).toStrictEqual(page);
    const store = filePageStore();
    try {
      const writer = store.open(SITEMAP);
      writer.append(page);
      writer.append(plainOf(page));
      const stored = writer.close();
      expect(stored.load()).toStrictEqual([page, plainOf(page)]);
      expect([...(stored.iterate?.() ?? [])]).toStrictEqual([page, plainOf(page)]);
    } finally {
      store.dispose();
    }
  });

  it("a plain record holds the page's sitemaps.org fields, and refuses a page with more", async () => {
    const page = await fullPage();
    const buffer = new RecordBuffer(256);
    expect(buffer.appendPlain(page)).toBe(false);
    expect(buffer.size).toBe(0);
    expect(buffer.appendPlain(plainOf(page))).toBe(true);
    const bytes = buffer.take();
    expect(decodePlain(bytes, 0, bytes.length)).toStrictEqual(plainOf(page));
  });

  it('the codec across threads gives the page back, dates as dates', async () => {
    const page = await fullPage();
    const back = decodePages(structuredClone(encodePages([page, plainOf(page)])));
    expect(back).toStrictEqual([page, plainOf(page)]);
  });
});
