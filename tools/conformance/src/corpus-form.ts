import type { PageJSON, SitemapJSON } from '@usp-ts/core';

/** A page in the corpus's canonical form (usp's `SitemapPage.to_dict()`). */
export interface CorpusPage {
  url: string;
  priority: number;
  last_modified: string | null;
  change_frequency: string | null;
  news_story: {
    title: string;
    publish_date: string | null;
    publication_name: string | null;
    publication_language: string | null;
    access: string | null;
    genres: string[];
    keywords: string[];
    stock_tickers: string[];
  } | null;
  images: CorpusImage[] | null;
  /**
   * Not in usp's `to_dict()`: kept so the alternates golden can be checked from the same tree.
   * The comparison ignores it (expected trees have no such key).
   */
  alternates?: [string, string][] | null;
}

export interface CorpusImage {
  loc: string | null;
  caption: string | null;
  geo_location: string | null;
  title: string | null;
  license: string | null;
}

/** A sitemap node in the corpus's canonical form. */
export interface CorpusNode {
  type: string;
  url: string;
  reason?: string;
  sub_sitemaps?: CorpusNode[];
  pages?: CorpusPage[];
}

/** `expected_alternates.json`: every page in `all_pages()` order. */
export type CorpusAlternates = { url: string; alternates: [string, string][] | null }[];

type Loose = Record<string, unknown>;

function pick(obj: Loose, camel: string, snake: string): unknown {
  return camel in obj ? obj[camel] : obj[snake];
}

function pageToCorpus(page: PageJSON | CorpusPage): CorpusPage {
  const p = page as unknown as Loose;
  const out: Loose = {};
  // A key missing from the input stays missing, so the comparison can report it.
  const put = (key: string, value: unknown, map: (v: never) => unknown = (v) => v): void => {
    if (value !== undefined) out[key] = value === null ? null : map(value as never);
  };
  put('url', p.url);
  put('priority', p.priority);
  put('last_modified', pick(p, 'lastModified', 'last_modified'));
  put('change_frequency', pick(p, 'changeFrequency', 'change_frequency'));
  put('news_story', pick(p, 'newsStory', 'news_story'), (news: Loose) => {
    const n: Loose = {};
    const putN = (key: string, value: unknown): void => {
      if (value !== undefined) n[key] = Array.isArray(value) ? [...value] : value;
    };
    putN('title', news.title);
    putN('publish_date', pick(news, 'publishDate', 'publish_date'));
    putN('publication_name', pick(news, 'publicationName', 'publication_name'));
    putN('publication_language', pick(news, 'publicationLanguage', 'publication_language'));
    putN('access', news.access);
    putN('genres', news.genres);
    putN('keywords', news.keywords);
    putN('stock_tickers', pick(news, 'stockTickers', 'stock_tickers'));
    return n;
  });
  put('images', p.images, (images: Loose[]) =>
    images.map((i) => {
      const img: Loose = {};
      for (const [key, value] of [
        ['loc', i.loc],
        ['caption', i.caption],
        ['geo_location', pick(i, 'geoLocation', 'geo_location')],
        ['title', i.title],
        ['license', i.license],
      ] as const) {
        if (value !== undefined) img[key] = value;
      }
      return img;
    }),
  );
  put('alternates', p.alternates, (alts: ({ hreflang: string; href: string } | [string, string])[]) =>
    alts.map((a) => (Array.isArray(a) ? [a[0], a[1]] : [a.hreflang, a.href])),
  );
  return out as unknown as CorpusPage;
}

/**
 * Maps the project's JSON form (core's `sitemapToJSON`, camelCase) onto the corpus's snake_case
 * form (corpus README section 8). Keys the corpus does not know (extension data, a child's
 * `lastModified`) are dropped. Idempotent: a tree already in corpus form comes back unchanged.
 */
export function toCorpusForm(sitemap: SitemapJSON | CorpusNode): CorpusNode {
  const s = sitemap as unknown as Loose;
  const node: CorpusNode = { type: s.type as string, url: s.url as string };
  if (s.reason !== undefined) node.reason = s.reason as string;
  const subs = pick(s, 'subSitemaps', 'sub_sitemaps') as (SitemapJSON | CorpusNode)[] | undefined;
  if (subs !== undefined) node.sub_sitemaps = subs.map(toCorpusForm);
  const pages = s.pages as (PageJSON | CorpusPage)[] | undefined;
  if (pages !== undefined) node.pages = pages.map(pageToCorpus);
  return node;
}

/** The tree's pages in `all_pages()` order (depth-first, document order) with their alternates. */
export function toAlternatesForm(sitemap: SitemapJSON | CorpusNode): CorpusAlternates {
  const out: CorpusAlternates = [];
  const walk = (node: CorpusNode): void => {
    for (const page of node.pages ?? []) out.push({ url: page.url, alternates: page.alternates ?? null });
    for (const child of node.sub_sitemaps ?? []) walk(child);
  };
  walk(toCorpusForm(sitemap));
  return out;
}
