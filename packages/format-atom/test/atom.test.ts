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
import { ATOM_03_NAMESPACE, ATOM_10_NAMESPACE, atom } from '../src/index.js';

const FEED_URL = 'http://example.com/atom.xml';

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
  const result = await parseWith([atom({ extensions: options.extensions })], xml, {
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

const feed10 = (entries: string, attrs = '') =>
  `<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="${ATOM_10_NAMESPACE}"${attrs}><title>F</title><link rel="self" href="http://example.com/atom.xml"/><link href="http://example.com/"/><updated>2024-01-01T00:00:00Z</updated>${entries}</feed>`;

const urls = (p: Parsed) => p.pages.map((x) => x.url);
const titles = (p: Parsed) => p.pages.map((x) => x.newsStory?.title ?? null);
const dates = (p: Parsed) => p.pages.map((x) => x.newsStory?.publishDate?.toSourceString() ?? null);
const codes = (p: Parsed) => p.warnings.map((w) => w.code);

describe('atom()', () => {
  it('claims <feed> in the Atom 1.0 and 0.3 namespaces and in none', () => {
    const f = atom();
    expect(f.kind).toBe('xml');
    expect(f.name).toBe('atom');
    expect(f.roots).toEqual([
      { ns: ATOM_10_NAMESPACE, local: 'feed' },
      { ns: ATOM_03_NAMESPACE, local: 'feed' },
      { ns: '', local: 'feed' },
    ]);
  });

  it('reads Atom 1.0 entries: link, title, updated date; feed-level elements ignored', async () => {
    const p = await parse(
      feed10(`
      <entry><title>One</title><link href="http://example.com/1"/><id>urn:1</id><updated>2009-12-17T12:04:56+02:00</updated>
        <summary>S1</summary><content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Body</p></div></content>
        <author><name>John</name></author></entry>
      <entry><title>Two</title><link href="http://example.com/2"/></entry>`),
    );
    expect(p.type).toBe('PagesAtomSitemap');
    expect(p.pages[0]).toEqual({
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
    });
    expect(urls(p)).toEqual(['http://example.com/1', 'http://example.com/2']);
    expect(dates(p)).toEqual(['2009-12-17T12:04:56+02:00', null]);
    expect(p.warnings).toEqual([]);
  });

  it('reads Atom 0.3 entries: issued, modified, tagline', async () => {
    const p = await parse(`<?xml version="1.0"?>
      <feed version="0.3" xmlns="${ATOM_03_NAMESPACE}"><title>F</title><link rel="alternate" type="text/html" href="http://example.com/"/>
        <entry><title>Issued</title><link rel="alternate" type="text/html" href="http://example.com/1"/><modified>2024-02-02T00:00:00Z</modified><issued>2024-01-01T00:00:00Z</issued></entry>
        <entry><title>Modified</title><link rel="alternate" type="text/html" href="http://example.com/2"/><modified>2024-02-02T00:00:00Z</modified></entry>
        <entry><tagline>Tagline only</tagline><link rel="alternate" href="http://example.com/3"/></entry>
      </feed>`);
    expect(urls(p)).toEqual(['http://example.com/1', 'http://example.com/2', 'http://example.com/3']);
    expect(titles(p)).toEqual(['Issued', 'Modified', 'Tagline only']);
    expect(dates(p)).toEqual(['2024-01-01T00:00:00+00:00', '2024-02-02T00:00:00+00:00', null]);
  });

  it('takes <issued> as the publication date over <created>, in either order', async () => {
    const entry = (dates: string) =>
      `<entry><title>e</title><link rel="alternate" href="https://example.com/e"/>${dates}<modified>2004-04-20T11:56:34Z</modified></entry>`;
    const created = '<created>2004-04-19T07:45:00Z</created>';
    const issued = '<issued>2004-04-20T00:23:47Z</issued>';
    for (const order of [created + issued, issued + created]) {
      const p = await parse(
        `<?xml version="1.0" encoding="utf-8"?><feed version="0.3" xmlns="${ATOM_03_NAMESPACE}"><title>t</title>${entry(order)}</feed>`,
      );
      expect(dates(p), order).toEqual(['2004-04-20T00:23:47+00:00']);
    }
    // <created> alone is still a publication date; Atom 1.0's <published> outranks everything.
    const alone = await parse(`<feed xmlns="${ATOM_03_NAMESPACE}">${entry(created)}</feed>`);
    expect(dates(alone)).toEqual(['2004-04-19T07:45:00+00:00']);
    const published = await parse(
      `<feed xmlns="${ATOM_03_NAMESPACE}">${entry(`${created}${issued}<published>2004-04-21T00:00:00Z</published>`)}</feed>`,
    );
    expect(dates(published)).toEqual(['2004-04-21T00:00:00+00:00']);
  });

  it('reads a feed without a namespace', async () => {
    const p = await parse(
      '<feed><entry><title>Bare</title><link href="http://example.com/bare"/></entry></feed>',
    );
    expect(p.type).toBe('PagesAtomSitemap');
    expect(urls(p)).toEqual(['http://example.com/bare']);
  });

  it('does not claim <feed> in another namespace', async () => {
    const p = await parse(
      '<feed xmlns="http://example.com/not-atom"><entry><link href="http://example.com/x"/></entry></feed>',
    );
    expect(p.type).toBe('InvalidSitemap');
  });

  it('takes the alternate link (rel="alternate" or no rel), else the first link', async () => {
    const p = await parse(
      feed10(`
      <entry><title>edit then alternate</title><link rel="edit" href="http://example.com/1/edit"/><link rel="alternate" href="http://example.com/1"/></entry>
      <entry><title>alternate then self</title><link rel="alternate" href="http://example.com/2"/><link rel="self" href="http://example.com/2/self"/></entry>
      <entry><title>no rel first</title><link href="http://example.com/3"/><link rel="alternate" href="http://example.com/3/alt"/></entry>
      <entry><title>ALTERNATE upper-case</title><link rel="self" href="http://example.com/4/self"/><link rel=" ALTERNATE " href="http://example.com/4"/></entry>
      <entry><title>only others</title><link rel="enclosure" href="http://example.com/5.mp3"/><link rel="SELF" href="http://example.com/5"/></entry>
      <entry><title>href-less alternate</title><link rel="alternate"/><link rel="related" href="http://example.com/6"/></entry>`),
    );
    expect(urls(p)).toEqual([
      'http://example.com/1',
      'http://example.com/2',
      'http://example.com/3',
      'http://example.com/4',
      'http://example.com/5.mp3',
      'http://example.com/6',
    ]);
  });

  it('resolves relative hrefs against xml:base and the document URL', async () => {
    const p = await parse(
      feed10(
        `
      <entry><title>doc base</title><link href="posts/1"/></entry>
      <entry xml:base="https://other.example.org/blog/"><title>entry base</title><link href="2"/></entry>
      <entry><title>link base</title><link xml:base="/deep/" href="3"/></entry>`,
        ' xml:base="http://example.com/feeds/"',
      ),
      { url: 'http://example.com/atom.xml' },
    );
    expect(urls(p)).toEqual([
      'http://example.com/feeds/posts/1',
      'https://other.example.org/blog/2',
      'http://example.com/deep/3',
    ]);
    expect(codes(p)).toEqual(['relative-url', 'relative-url', 'relative-url']);
  });

  it('resolves against the document URL without xml:base', async () => {
    const p = await parse(feed10('<entry><title>r</title><link href="/r"/></entry>'), {
      url: 'https://example.com/a/atom.xml',
    });
    expect(urls(p)).toEqual(['https://example.com/r']);
  });

  it('drops entries without a usable link with a warning, and duplicates', async () => {
    const p = await parse(
      feed10(`
      <entry><title>No link</title></entry>
      <entry><title>Empty href</title><link href=""/></entry>
      <entry><title>Mail</title><link href="mailto:a@example.com"/></entry>
      <entry><title>First</title><link href="http://example.com/d"/></entry>
      <entry><title>Again</title><link href="http://example.com/d"/></entry>`),
    );
    expect(urls(p)).toEqual(['http://example.com/d']);
    expect(titles(p)).toEqual(['First']);
    expect(codes(p)).toEqual(['missing-field', 'missing-field', 'invalid-url', 'duplicate-url']);
  });

  it('uses the summary when there is no title, and keeps an untitled entry without a story', async () => {
    const p = await parse(
      feed10(`
      <entry><summary>Summary only</summary><link href="http://example.com/s"/></entry>
      <entry><title></title><summary>Empty title</summary><link href="http://example.com/e"/></entry>
      <entry><link href="http://example.com/none"/><published>2024-01-01T00:00:00Z</published></entry>`),
    );
    expect(urls(p)).toEqual(['http://example.com/s', 'http://example.com/e', 'http://example.com/none']);
    expect(titles(p)).toEqual(['Summary only', 'Empty title', null]);
    expect(p.pages[2].newsStory).toBeNull();
    expect(codes(p)).toEqual(['missing-field']);
  });

  it('does not take markup-bearing (xhtml) title text; falls back to the summary', async () => {
    const p = await parse(
      feed10(`<entry><title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">Rich <b>title</b></div></title>
        <summary>Plain</summary><link href="http://example.com/x"/></entry>
        <entry><title type="html">&lt;b&gt;Escaped&lt;/b&gt;</title><link href="http://example.com/y"/></entry>`),
    );
    expect(titles(p)).toEqual(['Plain', '<b>Escaped</b>']);
  });

  it('takes published over updated in either order; updated only without published', async () => {
    const p = await parse(
      feed10(`
      <entry><title>a</title><link href="http://example.com/a"/><updated>2024-01-01T00:00:00Z</updated><published>2023-06-01T00:00:00Z</published></entry>
      <entry><title>b</title><link href="http://example.com/b"/><published>2023-06-01T00:00:00+02:00</published><updated>2024-01-01T00:00:00Z</updated></entry>
      <entry><title>c</title><link href="http://example.com/c"/><updated>2024-01-01</updated></entry>
      <entry><title>d</title><link href="http://example.com/d"/><published>garbage</published><updated>2024-03-01T00:00:00Z</updated></entry>`),
    );
    expect(dates(p)).toEqual([
      '2023-06-01T00:00:00+00:00',
      '2023-06-01T00:00:00+02:00',
      '2024-01-01T00:00:00',
      '2024-03-01T00:00:00+00:00',
    ]);
    expect(codes(p)).toEqual(['invalid-date']);
  });

  it('ignores elements of other namespaces inside an entry', async () => {
    const p = await parse(
      feed10(
        `<entry><media:title>Media</media:title><title>Real</title><media:link href="http://example.com/media"/>
           <link href="http://example.com/real"/><dc:date>2020-01-01</dc:date></entry>`,
        ' xmlns:media="http://search.yahoo.com/mrss/" xmlns:dc="http://purl.org/dc/elements/1.1/"',
      ),
    );
    expect(urls(p)).toEqual(['http://example.com/real']);
    expect(titles(p)).toEqual(['Real']);
    expect(dates(p)).toEqual([null]);
  });

  it('keeps every complete entry of a cut feed and never half of one', async () => {
    const full = feed10(
      '<entry><title>1</title><link href="http://example.com/1"/></entry><entry><title>2</title><link href="http://example.com/2"/></entry>',
    );
    const p = await parse(full.slice(0, full.lastIndexOf('</entry>')));
    expect(p.truncated).toBe(true);
    expect(urls(p)).toEqual(['http://example.com/1']);
  });

  it('stops at the page budget', async () => {
    const entries = Array.from(
      { length: 5 },
      (_, i) => `<entry><title>${i}</title><link href="http://example.com/${i}"/></entry>`,
    );
    const p = await parse(feed10(entries.join('')), { limits: { maxPagesPerDocument: 2 } });
    expect(urls(p)).toEqual(['http://example.com/0', 'http://example.com/1']);
  });

  describe('extensions', () => {
    const GEO = 'http://www.georss.org/georss';
    const geo: XmlExtension = {
      name: 'test-georss',
      namespaces: [GEO],
      create: () => {
        let point: string | null = null;
        return {
          startEntry: () => {
            point = null;
          },
          open: () => {},
          close: (el, text) => {
            if (el.local === 'point') point = text.trim();
          },
          endEntry: (draft) => {
            if (point !== null) (draft as { extensions?: unknown }).extensions = { point };
          },
        };
      },
    };

    it('routes claimed elements of each entry to the extension', async () => {
      const p = await parse(
        feed10(
          `<georss:point>0 0</georss:point>
           <entry><title>a</title><link href="http://example.com/a"/><georss:point>45.2 4.1</georss:point></entry>
           <entry><title>b</title><link href="http://example.com/b"/></entry>`,
          ` xmlns:georss="${GEO}"`,
        ),
        { extensions: [geo] },
      );
      expect(p.pages.map((x) => x.extensions)).toEqual([{ point: '45.2 4.1' }, undefined]);
    });

    it('refuses two extensions claiming one namespace', () => {
      expect(() => atom({ extensions: [geo, { ...geo, name: 'other' }] })).toThrow(PluginConflictError);
    });
  });
});
