/**
 * What an RSS `<item>` and an Atom `<entry>` share once their fields are read: the rule for a
 * field's text, the news story a feed entry becomes, and the checks its page passes on the way
 * out. The two formats read different elements and are separate packages; these rules must not
 * drift apart between them.
 */

import type { NewsStory, PageDraft } from '../contract/model.js';
import type { ParseContext } from '../contract/plugin.js';
import type { SitemapDate } from '../contract/sitemap-date.js';
import type { FeedLink } from './feed-url.js';
import { strippedText } from './text.js';

/** A feed field's text, stripped; `null` when nothing is left (an empty element is absent). */
export const feedText: (text: string) => string | null = strippedText;

/** The news story of a feed entry: a title and a date; feeds carry no other Google News field. */
export function feedNewsStory(title: string, publishDate: SitemapDate | null): NewsStory {
  return {
    title,
    publishDate,
    publicationName: null,
    publicationLanguage: null,
    access: null,
    genres: [],
    keywords: [],
    stockTickers: [],
  };
}

/**
 * Emits the pages of one feed: skips a link longer than `limits.maxUrlLength` and a link this
 * feed already emitted (first wins), and notes a relative link that was resolved. `what` names
 * an entry in the warnings (`RSS <item>`, `Atom <entry>`).
 */
export class FeedPageEmitter {
  readonly #ctx: ParseContext;
  readonly #what: string;
  readonly #seen = new Set<string>();

  constructor(ctx: ParseContext, what: string) {
    this.#ctx = ctx;
    this.#what = what;
  }

  /**
   * Emits `draft` (its `url` already set to `link.url`) unless a check skips it. `written` is
   * the (stripped) link as the feed wrote it, for the warning on a relative one. `false` when the
   * page budget is spent and the parse should stop; a skipped page is `true`.
   */
  emit(draft: PageDraft, link: FeedLink, written?: string): boolean {
    const ctx = this.#ctx;
    const max = ctx.limits.maxUrlLength;
    if (link.url.length > max) {
      ctx.warn(
        'invalid-url',
        `${this.#what} link longer than ${max} characters skipped: ${link.url.slice(0, 100)}…`,
      );
      return true;
    }
    if (link.relative) {
      const as = written === undefined ? '' : ` ${written}`;
      ctx.warn('relative-url', `Relative ${this.#what} link${as} resolved to ${link.url}`);
    }
    if (this.#seen.has(link.url)) {
      ctx.warn('duplicate-url', `Duplicate ${this.#what} link skipped: ${link.url}`);
      return true;
    }
    this.#seen.add(link.url);
    return ctx.page(draft);
  }
}
