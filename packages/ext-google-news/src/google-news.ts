import {
  type NewsStory,
  type PageDraft,
  type ParseContext,
  parseIsoDateCold,
  type SitemapDate,
  strippedText,
  type XmlElement,
  type XmlExtension,
  type XmlExtensionHandler,
} from '@usp-ts/core/parse';

/** Google News sitemap namespace, with the https and trailing-slash spellings seen in the wild. */
export const NEWS_NAMESPACES: readonly string[] = [
  'http://www.google.com/schemas/sitemap-news/0.9',
  'http://www.google.com/schemas/sitemap-news/0.9/',
  'https://www.google.com/schemas/sitemap-news/0.9',
  'https://www.google.com/schemas/sitemap-news/0.9/',
];

/**
 * `<news:news>`: a page's `newsStory`. As in usp, a story exists only when it has a title and a
 * valid publication date; unlike usp, `<news:genres>` is read.
 */
export function googleNews(): XmlExtension {
  const namespaces = new Set(NEWS_NAMESPACES);
  return {
    name: 'google-news',
    namespaces: NEWS_NAMESPACES,
    create: (ctx) => new NewsHandler(ctx, namespaces),
  };
}

class NewsHandler implements XmlExtensionHandler {
  private readonly ctx: ParseContext;
  private readonly namespaces: ReadonlySet<string>;
  private seen = false;
  private title: string | null = null;
  private publishDate: SitemapDate | null = null;
  private dateText: string | null = null;
  private publicationName: string | null = null;
  private publicationLanguage: string | null = null;
  private access: string | null = null;
  private genres: string[] = EMPTY;
  private keywords: string[] = EMPTY;
  private stockTickers: string[] = EMPTY;
  // A news sitemap often gives many stories one publication date: the last text read and its
  // date are kept, and a repeat of the text reuses the date (a SitemapDate is immutable).
  private lastDateText = '';
  private lastDate: SitemapDate | null = null;

  constructor(ctx: ParseContext, namespaces: ReadonlySet<string>) {
    this.ctx = ctx;
    this.namespaces = namespaces;
  }

  startEntry(): void {
    this.seen = false;
    this.title = null;
    this.publishDate = null;
    this.dateText = null;
    this.publicationName = null;
    this.publicationLanguage = null;
    this.access = null;
    this.genres = EMPTY;
    this.keywords = EMPTY;
    this.stockTickers = EMPTY;
  }

  open(el: XmlElement): void {
    if (el.local === 'news' && this.namespaces.has(el.ns)) this.seen = true;
  }

  close(el: XmlElement, text: string): void {
    // Elements of other namespaces nested in <news:news> are not ours.
    if (!this.namespaces.has(el.ns)) return;
    switch (el.local) {
      case 'title':
        this.title = strippedText(text);
        break;
      case 'publication_date':
        this.readDate(text);
        break;
      case 'name':
        this.publicationName = strippedText(text);
        break;
      case 'language':
        this.publicationLanguage = strippedText(text);
        break;
      case 'access':
        this.access = strippedText(text);
        break;
      case 'genres':
        this.genres = splitList(text);
        break;
      case 'keywords':
        this.keywords = splitList(text);
        break;
      case 'stock_tickers':
        this.stockTickers = splitList(text);
        break;
    }
  }

  private readDate(text: string): void {
    const s = strippedText(text);
    this.dateText = s;
    if (s === null) this.publishDate = null;
    else if (s === this.lastDateText) this.publishDate = this.lastDate;
    else {
      // A news sitemap holds at most 1,000 stories: its dates are read before V8 optimises
      // parseIsoDate, and parseIsoDateCold costs a fifth of it then.
      const date = parseIsoDateCold(s);
      this.publishDate = date;
      if (date !== null) {
        this.lastDateText = s;
        this.lastDate = date;
      }
    }
  }

  endEntry(draft: PageDraft): void {
    if (!this.seen) return;
    this.seen = false;
    if (this.title === null || this.publishDate === null) {
      const missing =
        this.title === null
          ? 'no <news:title>'
          : this.dateText === null
            ? 'no <news:publication_date>'
            : `invalid <news:publication_date> ${JSON.stringify(this.dateText)}`;
      this.ctx.warn(
        this.title !== null && this.dateText !== null ? 'invalid-date' : 'missing-field',
        `News story of ${draft.url || 'a <url>'} dropped: ${missing}`,
      );
      return;
    }
    const story: NewsStory = {
      title: this.title,
      publishDate: this.publishDate,
      publicationName: this.publicationName,
      publicationLanguage: this.publicationLanguage,
      access: this.access,
      // Fresh arrays: stories must not share the placeholder.
      genres: this.genres === EMPTY ? [] : this.genres,
      keywords: this.keywords === EMPTY ? [] : this.keywords,
      stockTickers: this.stockTickers === EMPTY ? [] : this.stockTickers,
    };
    draft.newsStory = story;
  }
}

const EMPTY: string[] = [];

/**
 * Comma-separated list, items stripped, empty items dropped (usp keeps them as ""). `\s` is the
 * whitespace `trim` strips, so splitting the trimmed text on commas with the whitespace around
 * them strips every item. One native split instead of a loop trimming each part: this runs for
 * every story, mostly before the optimising compiler has it (issue 37).
 */
export function splitList(text: string): string[] {
  const parts = text.trim().split(LIST_SEPARATOR);
  return parts.includes('') ? parts.filter(nonEmpty) : parts;
}

const LIST_SEPARATOR = /\s*,\s*/;

function nonEmpty(s: string): boolean {
  return s.length > 0;
}
