import fc from 'fast-check';

/** A urlset as data, rendered to XML in different (equivalent) ways by `renderUrlset`. */
export interface EntryModel {
  path: string;
  priority: string | null;
  changefreq: string | null;
  lastmod: string | null;
  news: { title: string; date: string; name: string; keywords: string } | null;
  images: { loc: string; caption: string | null }[];
  alternates: { hreflang: string; href: string }[];
}

export const NAMESPACES = {
  sitemap: 'http://www.sitemaps.org/schemas/sitemap/0.9',
  news: 'http://www.google.com/schemas/sitemap-news/0.9',
  image: 'http://www.google.com/schemas/sitemap-image/1.1',
  video: 'http://www.google.com/schemas/sitemap-video/1.1',
  xhtml: 'http://www.w3.org/1999/xhtml',
} as const;

type Ext = 'news' | 'image' | 'xhtml';

/** How the namespaces are written: prefixes, and where they are declared. */
export interface Style {
  /** `null`: the sitemap namespace is the default namespace. */
  sitemapPrefix: string | null;
  prefixes: Record<Ext, string>;
  /** Declare each namespace on the element that uses it instead of on the root. */
  declareLocally: boolean;
  indent: boolean;
}

export const CANONICAL: Style = {
  sitemapPrefix: null,
  prefixes: { news: 'news', image: 'image', xhtml: 'xhtml' },
  declareLocally: false,
  indent: true,
};

const text = fc.constantFrom(
  'Plain',
  'Été à Paris',
  '日本語の記事',
  'A &amp; B',
  '&lt;b&gt;',
  'x]]y',
  'Ünïcödé 😀',
);
const word = fc.stringMatching(/^[a-z][a-z0-9]{0,6}$/);

export const entryArb: fc.Arbitrary<Omit<EntryModel, 'path'>> = fc.record({
  priority: fc.option(fc.constantFrom('0.0', '0.5', '0.55555', '1.0', '1', '.3'), { nil: null }),
  changefreq: fc.option(fc.constantFrom('daily', 'WEEKLY', ' monthly '), { nil: null }),
  lastmod: fc.option(fc.constantFrom('2024-01-02', '2024-01-02T03:04:05+02:00', '2023-12-31T23:59:59Z'), {
    nil: null,
  }),
  news: fc.option(
    fc.record({
      title: text,
      date: fc.constantFrom('2024-01-02', '2024-01-02T03:04:05-05:00'),
      name: text,
      keywords: fc.constantFrom('', 'a, b', 'x,,y'),
    }),
    { nil: null },
  ),
  images: fc.array(
    fc.record({
      loc: word.map((w) => `http://example.com/${w}.jpg`),
      caption: fc.option(text, { nil: null }),
    }),
    {
      maxLength: 2,
    },
  ),
  alternates: fc.array(
    fc.record({
      hreflang: fc.constantFrom('en', 'fr-FR', 'x-default'),
      href: word.map((w) => `http://example.com/${w}`),
    }),
    { maxLength: 2 },
  ),
});

/** Entries with unique URLs (the index is part of the path). */
export const urlsetArb: fc.Arbitrary<EntryModel[]> = fc
  .array(fc.tuple(word, entryArb), { minLength: 1, maxLength: 6 })
  .map((list) => list.map(([w, e], i) => ({ ...e, path: `${w}-${i}` })));

const prefixArb = fc.constantFrom('n', 'news', 'img', 'i', 'x', 'xhtml', 'h', 'a1', 'zz', 'sm', 's');

export const styleArb: fc.Arbitrary<Style> = fc
  .record({
    sitemapPrefix: fc.option(prefixArb, { nil: null }),
    news: prefixArb,
    image: prefixArb,
    xhtml: prefixArb,
    declareLocally: fc.boolean(),
    indent: fc.boolean(),
  })
  .filter((s) => new Set([s.sitemapPrefix, s.news, s.image, s.xhtml]).size === 4)
  .map((s) => ({
    sitemapPrefix: s.sitemapPrefix,
    prefixes: { news: s.news, image: s.image, xhtml: s.xhtml },
    declareLocally: s.declareLocally,
    indent: s.indent,
  }));

/** Renders the entries; returns the XML and, per entry, the character offset just after its `</url>`. */
export function renderUrlset(
  entries: EntryModel[],
  style: Style = CANONICAL,
): { xml: string; ends: number[] } {
  const nl = style.indent ? '\n' : '';
  const sp = (n: number) => (style.indent ? '  '.repeat(n) : '');
  const sm = (local: string) => (style.sitemapPrefix === null ? local : `${style.sitemapPrefix}:${local}`);
  const smDecl =
    style.sitemapPrefix === null
      ? ` xmlns="${NAMESPACES.sitemap}"`
      : ` xmlns:${style.sitemapPrefix}="${NAMESPACES.sitemap}"`;
  const decl = (ext: Ext) => ` xmlns:${style.prefixes[ext]}="${NAMESPACES[ext]}"`;
  const local = (ext: Ext) => (style.declareLocally ? decl(ext) : '');
  const q = (ext: Ext, name: string) => `${style.prefixes[ext]}:${name}`;

  let xml = `<?xml version="1.0" encoding="UTF-8"?>${nl}<${sm('urlset')}${smDecl}`;
  if (!style.declareLocally) xml += decl('news') + decl('image') + decl('xhtml');
  xml += `>${nl}`;
  const ends: number[] = [];
  for (const e of entries) {
    xml += `${sp(1)}<${sm('url')}>${nl}`;
    xml += `${sp(2)}<${sm('loc')}>http://example.com/${e.path}</${sm('loc')}>${nl}`;
    if (e.lastmod !== null) xml += `${sp(2)}<${sm('lastmod')}>${e.lastmod}</${sm('lastmod')}>${nl}`;
    for (const a of e.alternates) {
      xml += `${sp(2)}<${q('xhtml', 'link')}${local('xhtml')} rel="alternate" hreflang="${a.hreflang}" href="${a.href}"/>${nl}`;
    }
    if (e.changefreq !== null)
      xml += `${sp(2)}<${sm('changefreq')}>${e.changefreq}</${sm('changefreq')}>${nl}`;
    for (const img of e.images) {
      xml += `${sp(2)}<${q('image', 'image')}${local('image')}>${nl}${sp(3)}<${q('image', 'loc')}>${img.loc}</${q('image', 'loc')}>${nl}`;
      if (img.caption !== null)
        xml += `${sp(3)}<${q('image', 'caption')}>${img.caption}</${q('image', 'caption')}>${nl}`;
      xml += `${sp(2)}</${q('image', 'image')}>${nl}`;
    }
    if (e.news !== null) {
      const n = (name: string, value: string) => `<${q('news', name)}>${value}</${q('news', name)}>`;
      xml += `${sp(2)}<${q('news', 'news')}${local('news')}>${nl}`;
      xml += `${sp(3)}<${q('news', 'publication')}>${n('name', e.news.name)}</${q('news', 'publication')}>${nl}`;
      xml += `${sp(3)}${n('publication_date', e.news.date)}${nl}${sp(3)}${n('title', e.news.title.replace('x]]y', '<![CDATA[x]]y & <z>]]>'))}${nl}`;
      xml += `${sp(3)}${n('keywords', e.news.keywords)}${nl}${sp(2)}</${q('news', 'news')}>${nl}`;
    }
    if (e.priority !== null) xml += `${sp(2)}<${sm('priority')}>${e.priority}</${sm('priority')}>${nl}`;
    xml += `${sp(1)}</${sm('url')}>`;
    ends.push(xml.length);
    xml += nl;
  }
  xml += `</${sm('urlset')}>${nl}`;
  return { xml, ends };
}
