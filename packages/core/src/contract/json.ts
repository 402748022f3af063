import type { Page, PageExtensions } from './model.js';
import { IndexWebsiteSitemap, isIndexSitemap, isPagesSitemap, type Sitemap } from './sitemap.js';
import type { WalkOutcome } from './walk-summary.js';

/** The JSON form of a page: the contract of the CLI's json output and the conformance comparison. */
export interface PageJSON {
  url: string;
  priority: number;
  lastModified: string | null;
  changeFrequency: string | null;
  newsStory: {
    title: string;
    publishDate: string | null;
    publicationName: string | null;
    publicationLanguage: string | null;
    access: string | null;
    genres: string[];
    keywords: string[];
    stockTickers: string[];
  } | null;
  images:
    | {
        loc: string | null;
        caption: string | null;
        geoLocation: string | null;
        title: string | null;
        license: string | null;
      }[]
    | null;
  alternates: { hreflang: string; href: string }[] | null;
  extensions?: PageExtensions;
}

export interface SitemapJSON {
  type: Sitemap['type'];
  url: string;
  reason?: string;
  /** The root only: how the walk ended (`IndexWebsiteSitemap.summary`). */
  outcome?: WalkOutcome;
  /** The root only, when the outcome is not `ok`: why. */
  outcomeReason?: string;
  lastModified?: string;
  subSitemaps?: SitemapJSON[];
  pages?: PageJSON[];
}

export interface ToJSONOptions {
  /** Include each pages sitemap's pages (default true). */
  withPages?: boolean;
}

/** Characters `JSON.stringify` escapes in a string (surrogates: it escapes lone ones). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as `JSON.stringify` writes it; most need no escape, and skip its work. */
function quoted(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/** What a plain page's fields end with after its `changeFrequency`. */
const PLAIN_REST = ',"newsStory":null,"images":null,"alternates":null';

/**
 * A plain page's fields from its `changeFrequency` on, after a `lastModified` left open (a date:
 * this closes its quote) or closed (`null`, or a date `JSON.stringify` wrote): the sitemap
 * protocol's seven values and `null` as constants, made once.
 */
const FREQUENCY_TAILS = new Map<string | null, readonly [open: string, closed: string]>(
  [null, 'always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never'].map((cf) => {
    const tail = `"changeFrequency":${cf === null ? 'null' : `"${cf}"`}${PLAIN_REST}`;
    return [cf, [`",${tail}`, `,${tail}`]];
  }),
);

/**
 * A plain page's fields from the end of its URL to its `lastModified`'s value, open (ending with
 * the date's opening quote) or closed, by priority: a sitemap's pages share a few (made once, up
 * to PRIORITY_PIECES_KEPT of them).
 */
const PRIORITY_PIECES = new Map<number, readonly [open: string, closed: string]>();
const PRIORITY_PIECES_KEPT = 256;

function priorityPieces(priority: number): readonly [open: string, closed: string] {
  let pieces = PRIORITY_PIECES.get(priority);
  if (pieces === undefined) {
    const head = `","priority":${Number.isFinite(priority) ? String(priority) : 'null'},"lastModified":`;
    pieces = [`${head}"`, head];
    if (PRIORITY_PIECES.size < PRIORITY_PIECES_KEPT) PRIORITY_PIECES.set(priority, pieces);
  }
  return pieces;
}

/**
 * For a plain page (no news, images, alternates or extension data; each field of the model's
 * type): its `lastModified` as the JSON form writes it. `undefined` for any other page, which
 * takes `pageToJSON`. With `plainPageFields`, for writers that serialise every page.
 */
export function plainPageDate(page: Page): string | null | undefined {
  if (
    page.newsStory !== null ||
    page.images !== null ||
    page.alternates !== null ||
    page.extensions !== undefined ||
    typeof page.url !== 'string' ||
    typeof page.priority !== 'number' ||
    (page.changeFrequency !== null && typeof page.changeFrequency !== 'string')
  ) {
    return undefined;
  }
  const lm = page.lastModified ? page.lastModified.toSourceString() : null;
  return lm === null || typeof lm === 'string' ? lm : undefined;
}

/**
 * `JSON.stringify(pageToJSON(page))` without its braces, for a plain page and its date from
 * `plainPageDate`, with `url` written for the page's URL (default its own). Written out in the
 * JSON form's key order: the same bytes at a fraction of the cost (a batch's rows and their
 * hashes, `usp ls -f ndjson`).
 */
export function plainPageFields(page: Page, lastModified: string | null, url: string = page.url): string {
  const { priority, changeFrequency: cf } = page;
  const tails = FREQUENCY_TAILS.get(cf);
  if (tails === undefined || NEEDS_ESCAPE.test(url)) {
    return `"url":${quoted(url)},"priority":${Number.isFinite(priority) ? String(priority) : 'null'},"lastModified":${lastModified === null ? 'null' : quoted(lastModified)},"changeFrequency":${cf === null ? 'null' : quoted(cf)}${PLAIN_REST}`;
  }
  // Four joins a page rather than fifteen: the row's text is made for every page of a batch, and
  // each join is a string of its own until the text is read whole (its hash).
  const pieces = priorityPieces(priority);
  if (lastModified !== null && !NEEDS_ESCAPE.test(lastModified)) {
    return `"url":"${url}${pieces[0]}${lastModified}${tails[0]}`;
  }
  return `"url":"${url}${pieces[1]}${lastModified === null ? 'null' : JSON.stringify(lastModified)}${tails[1]}`;
}

export function pageToJSON(page: Page): PageJSON {
  const news = page.newsStory;
  const json: PageJSON = {
    url: page.url,
    priority: page.priority,
    lastModified: page.lastModified ? page.lastModified.toSourceString() : null,
    changeFrequency: page.changeFrequency,
    newsStory: news
      ? {
          title: news.title,
          publishDate: news.publishDate ? news.publishDate.toSourceString() : null,
          publicationName: news.publicationName,
          publicationLanguage: news.publicationLanguage,
          access: news.access,
          genres: [...news.genres],
          keywords: [...news.keywords],
          stockTickers: [...news.stockTickers],
        }
      : null,
    images: page.images ? page.images.map((i) => ({ ...i })) : null,
    alternates: page.alternates ? page.alternates.map((a) => ({ ...a })) : null,
  };
  // Extension data is plain data by contract; JSON.parse/stringify turns its dates into strings.
  if (page.extensions !== undefined) json.extensions = JSON.parse(JSON.stringify(page.extensions));
  return json;
}

export function sitemapToJSON(sitemap: Sitemap, options: ToJSONOptions = {}): SitemapJSON {
  const withPages = options.withPages ?? true;
  const json: SitemapJSON = { type: sitemap.type, url: sitemap.url };
  if (sitemap.lastModified) json.lastModified = sitemap.lastModified.toSourceString();
  if (sitemap instanceof IndexWebsiteSitemap) {
    json.outcome = sitemap.summary.outcome;
    if (sitemap.summary.reason !== null) json.outcomeReason = sitemap.summary.reason;
  }
  if (sitemap.type === 'InvalidSitemap') json.reason = sitemap.reason;
  else if (isIndexSitemap(sitemap))
    json.subSitemaps = sitemap.subSitemaps.map((c) => sitemapToJSON(c, options));
  else if (isPagesSitemap(sitemap) && withPages) json.pages = sitemap.pages.map(pageToJSON);
  return json;
}
