import {
  type DocumentLimits,
  isPagesSitemap,
  type Page,
  PluginConflictError,
  type Warning,
  type XmlExtension,
} from '@usp-ts/core';
import { parseWith } from '@usp-ts/testkit';
import { describe, expect, it } from 'vitest';
import { rss } from '../src/index.js';

const FEED_URL = 'http://example.com/feed.rss';

interface Parsed {
  type: string;
  pages: Page[];
  warnings: Warning[];
  truncated: boolean;
}

async function parse(
  xml: string,
  options: { url?: string; extensions?: XmlExtension[]; limits?: Partial<DocumentLimits> } = {},
): Promise<Parsed> {
  const result = await parseWith([rss({ extensions: options.extensions })], xml, {
    url: options.url ?? FEED_URL,
    limits: options.limits,
  });
  return {
    type: result.sitemap.type,
    pages: isPagesSitemap(result.sitemap) ? result.sitemap.pages : [],
    warnings: result.warnings,
    truncated: result.truncated,
  };
}

const feed = (items: string, channelExtra = '', rootAttrs = '') =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"${rootAttrs}><channel><title>Feed</title><link>http://example.com/</link>${channelExtra}${items}</channel></rss>`;

const urls = (p: Parsed) => p.pages.map((x) => x.url);
const titles = (p: Parsed) => p.pages.map((x) => x.newsStory?.title);
const codes = (p: Parsed) => p.warnings.map((w) => w.code);

describe('rss()', () => {
  it('is an XML format claiming <rss> in any namespace', () => {
    const f = rss();
    expect(f.kind).toBe('xml');
    expect(f.name).toBe('rss');
    expect(f.roots).toEqual([{ ns: '*', local: 'rss' }]);
  });

  it('turns each item into a page with a news story of title and pubDate', async () => {
    const p = await parse(
      feed(`
      <item><title>One</title><description>D1</description><link>http://example.com/1</link>
        <guid>http://example.com/1</guid><pubDate>Thu, 17 Dec 2009 12:04:56 +0200</pubDate></item>
      <item><title>Two</title><link>https://example.com/2</link></item>`),
    );
    expect(p.type).toBe('PagesRSSSitemap');
    expect(p.pages).toEqual([
      {
        url: 'http://example.com/1',
        priority: 0.5,
        lastModified: null,
        changeFrequency: null,
        newsStory: {
          title: 'One',
          publishDate: expect.anything(),
          publicationName: null,
          publicationLanguage: null,
          access: null,
          genres: [],
          keywords: [],
          stockTickers: [],
        },
        images: null,
        alternates: null,
      },
      expect.objectContaining({
        url: 'https://example.com/2',
        newsStory: expect.objectContaining({ title: 'Two', publishDate: null }),
      }),
    ]);
    expect(p.pages[0].newsStory?.publishDate?.toSourceString()).toBe('2009-12-17T12:04:56+02:00');
    expect(p.warnings).toEqual([]);
  });

  it('reads an empty feed as an empty pages sitemap', async () => {
    const p = await parse(feed('', '<pubDate>Thu, 17 Dec 2009 12:04:56 +0200</pubDate>'));
    expect(p.type).toBe('PagesRSSSitemap');
    expect(p.pages).toEqual([]);
  });

  it('uses the description as the title when there is none', async () => {
    const p = await parse(
      feed('<item><description>Only a description</description><link>http://example.com/d</link></item>'),
    );
    expect(titles(p)).toEqual(['Only a description']);
  });

  it('skips items without a link, or without title and description, with a warning', async () => {
    const p = await parse(
      feed(`
      <item><title>No link</title></item>
      <item><title>Empty link</title><link>  </link></item>
      <item><link>http://example.com/untitled</link><pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate></item>
      <item><title>Kept</title><link>http://example.com/kept</link></item>`),
    );
    expect(urls(p)).toEqual(['http://example.com/kept']);
    expect(codes(p)).toEqual(['missing-field', 'missing-field', 'missing-field']);
    expect(p.warnings[2].message).toContain('http://example.com/untitled');
    expect(p.warnings[0].url).toBe(FEED_URL);
  });

  it('strips links and de-duplicates on the stripped link, first wins', async () => {
    const p = await parse(
      feed(`
      <item><title>First</title><link>http://example.com/dup</link></item>
      <item><title>Second</title><link>http://example.com/dup</link></item>
      <item><title>Padded</title><link>
          http://example.com/dup  </link></item>
      <item><title>Other</title><link>http://example.com/other</link></item>`),
    );
    expect(urls(p)).toEqual(['http://example.com/dup', 'http://example.com/other']);
    expect(titles(p)).toEqual(['First', 'Other']);
    expect(codes(p)).toEqual(['duplicate-url', 'duplicate-url']);
  });

  it('resolves a relative link against the document URL and drops non-http links', async () => {
    const p = await parse(
      feed(`
      <item><title>Relative</title><link>/relative</link></item>
      <item><title>Protocol-relative</title><link>//cdn.example.org/x</link></item>
      <item><title>FTP</title><link>ftp://example.com/f</link></item>
      <item><title>JS</title><link>javascript:alert(1)</link></item>
      <item><title>Not a URL</title><link>http:/broken</link></item>`),
      { url: 'https://example.com/feeds/main.rss' },
    );
    expect(urls(p)).toEqual(['https://example.com/relative', 'https://cdn.example.org/x']);
    expect(codes(p)).toEqual(['relative-url', 'relative-url', 'invalid-url', 'invalid-url', 'invalid-url']);
  });

  it('keeps an item whose pubDate is invalid or empty, without a date', async () => {
    const p = await parse(
      feed(`
      <item><title>Bad</title><link>http://example.com/bad</link><pubDate>not a date</pubDate></item>
      <item><title>Empty</title><link>http://example.com/empty</link><pubDate></pubDate></item>
      <item><title>Zoneless</title><link>http://example.com/nz</link><pubDate>Tue, 02 Jan 2024 03:04:05</pubDate></item>`),
    );
    expect(urls(p)).toEqual(['http://example.com/bad', 'http://example.com/empty', 'http://example.com/nz']);
    expect(p.pages.map((x) => x.newsStory?.publishDate?.toSourceString() ?? null)).toEqual([
      null,
      null,
      '2024-01-02T03:04:05',
    ]);
    expect(codes(p)).toEqual(['invalid-date']);
  });

  it('lets no element of another namespace overwrite the item fields or stop the feed', async () => {
    const p = await parse(
      feed(
        `
      <item>
        <atom:link href="http://example.com/1/amp" rel="amphtml"/>
        <atom:link/>
        <title>Real title</title>
        <media:title>Media title</media:title>
        <link>http://example.com/1</link>
        <media:content url="http://example.com/v.mp4"><media:title>Nested</media:title></media:content>
        <dc:date>2020-01-01</dc:date>
        <pubDate>Mon, 01 Jan 2024 12:00:00 GMT</pubDate>
        <content:encoded><![CDATA[<p>Body <a href="x">link</a></p>]]></content:encoded>
        <description>Description</description>
      </item>
      <item><title>Second</title><link>http://example.com/2</link><atom:link href="http://example.com/2/self" rel="self"/></item>`,
        '<atom:link href="http://example.com/feed.rss" rel="self"/>',
        ' xmlns:atom="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:content="http://purl.org/rss/1.0/modules/content/"',
      ),
    );
    expect(urls(p)).toEqual(['http://example.com/1', 'http://example.com/2']);
    expect(titles(p)).toEqual(['Real title', 'Second']);
    expect(p.pages[0].newsStory?.publishDate?.toSourceString()).toBe('2024-01-01T12:00:00+00:00');
  });

  it('never lets an empty element abort the rest of the feed', async () => {
    const p = await parse(
      feed(`
      <item><title>A</title><link>http://example.com/a</link><title></title></item>
      <item><title></title><description></description><link>http://example.com/b</link></item>
      <item><title/><link>http://example.com/c</link><description>C</description></item>
      <item><title>After</title><link>http://example.com/after</link></item>`),
    );
    expect(urls(p)).toEqual(['http://example.com/a', 'http://example.com/c', 'http://example.com/after']);
    expect(titles(p)).toEqual(['A', 'C', 'After']);
  });

  it('ignores channel-level elements', async () => {
    const p = await parse(
      feed(
        '',
        '<description>Channel</description><pubDate>Mon, 01 Jan 2024 12:00:00 GMT</pubDate><image><link>http://example.com/</link><title>x</title></image>',
      ),
    );
    expect(p.pages).toEqual([]);
    expect(p.warnings).toEqual([]);
  });

  it('decodes entities once and keeps CDATA', async () => {
    const p = await parse(
      feed(`<item><title>Tom &amp;amp; Jerry &lt;3</title><link>http://example.com/?a=1&amp;b=2</link></item>
      <item><title><![CDATA[Fish & <Chips>]]></title><link><![CDATA[http://example.com/?c=3&d=4]]></link></item>`),
    );
    expect(titles(p)).toEqual(['Tom &amp; Jerry <3', 'Fish & <Chips>']);
    expect(urls(p)).toEqual(['http://example.com/?a=1&b=2', 'http://example.com/?c=3&d=4']);
  });

  it('reads a feed whose <rss> declares a namespace, in that namespace', async () => {
    const xml =
      '<rss xmlns="http://backend.userland.com/rss2" version="2.0"><channel><item><title>NS</title><link>http://example.com/ns</link></item></channel></rss>';
    const p = await parse(xml);
    expect(p.type).toBe('PagesRSSSitemap');
    expect(urls(p)).toEqual(['http://example.com/ns']);
  });

  it('keeps every complete item of a cut feed and never half of one', async () => {
    const full = feed(`
      <item><title>One</title><link>http://example.com/1</link></item>
      <item><title>Two</title><link>http://example.com/2</link></item>`);
    const cut = full.slice(0, full.indexOf('http://example.com/2') + 10);
    const p = await parse(cut);
    expect(p.truncated).toBe(true);
    expect(urls(p)).toEqual(['http://example.com/1']);
  });

  it('stops at the page budget', async () => {
    const items = Array.from(
      { length: 10 },
      (_, i) => `<item><title>${i}</title><link>http://example.com/${i}</link></item>`,
    );
    const p = await parse(feed(items.join('')), { limits: { maxPagesPerDocument: 3 } });
    expect(urls(p)).toEqual(['http://example.com/0', 'http://example.com/1', 'http://example.com/2']);
  });

  it('drops links longer than maxUrlLength', async () => {
    const long = `http://example.com/${'a'.repeat(100)}`;
    const p = await parse(
      feed(
        `<item><title>L</title><link>${long}</link></item><item><title>S</title><link>http://example.com/s</link></item>`,
      ),
      {
        limits: { maxUrlLength: 50 },
      },
    );
    expect(urls(p)).toEqual(['http://example.com/s']);
    expect(codes(p)).toEqual(['invalid-url']);
  });

  it('does not claim RSS 1.0 (rdf:RDF)', async () => {
    const p = await parse(
      '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"><item><title>t</title><link>http://example.com/1</link></item></rdf:RDF>',
    );
    expect(p.type).toBe('InvalidSitemap');
  });

  describe('extensions', () => {
    const MRSS = 'http://search.yahoo.com/mrss/';
    // A stand-in for a Media RSS package: collects <media:content url> per item into the page.
    const media = (events: string[]): XmlExtension => ({
      name: 'test-media',
      namespaces: [MRSS],
      create: () => {
        let found: string[] = [];
        return {
          startEntry: () => {
            found = [];
          },
          open: (el) => {
            events.push(`open ${el.local}`);
            if (el.local === 'content' && el.attrs.url) found.push(el.attrs.url);
          },
          close: (el, text) => {
            const t = text.trim();
            events.push(t === '' ? `close ${el.local}` : `close ${el.local} ${t}`);
          },
          endEntry: (draft) => {
            if (found.length > 0) (draft as { extensions?: unknown }).extensions = { media: found };
          },
        };
      },
    });

    it('routes the elements of a claimed namespace inside each item to the extension', async () => {
      const events: string[] = [];
      const p = await parse(
        feed(
          `<item><title>V</title><link>http://example.com/v</link>
             <media:group><media:content url="http://example.com/v.mp4"/><media:title>T</media:title></media:group></item>
           <item><title>W</title><link>http://example.com/w</link></item>`,
          '<media:thumbnail url="http://example.com/channel.png"/>',
          ` xmlns:media="${MRSS}"`,
        ),
        { extensions: [media(events)] },
      );
      expect(urls(p)).toEqual(['http://example.com/v', 'http://example.com/w']);
      expect(p.pages[0].extensions).toEqual({ media: ['http://example.com/v.mp4'] });
      expect(p.pages[1].extensions).toBeUndefined();
      expect(titles(p)).toEqual(['V', 'W']);
      // Channel-level media elements are not inside an item: not routed.
      expect(events).toEqual([
        'open group',
        'open content',
        'close content',
        'open title',
        'close title T',
        'close group',
      ]);
    });

    it('refuses two extensions claiming one namespace', () => {
      expect(() => rss({ extensions: [media([]), media([])] })).toThrow(PluginConflictError);
    });
  });
});
