import type { SitemapDate } from '@usp-ts/core';

/** Slots of the cache (a power of two): 1,024 texts and dates, ~100 KB once full. */
const SLOTS = 1024;
const MASK = SLOTS - 1;
/** Characters of a text the slot is taken from: a W3C date with its zone is 25. */
const HASHED_CHARS = 32;

/**
 * `<lastmod>` texts and the dates read from them, by slot, shared by every urlset of the process:
 * a sitemap's pages, and a site's sitemaps, repeat few dates in any order (a CMS writes the day a
 * page was published or edited; the bench farm's 526,495 pages carry 300 dates), so a date is
 * read once rather than once a page (issue 37). A slot keeps the last text that fell on it; a
 * date is given back only for that exact text. SitemapDate is immutable: pages may share one.
 * Only dates go in: a text that failed to parse is read (and warned about) again each time.
 */
export class DateCache {
  readonly #texts: string[] = new Array<string>(SLOTS).fill('');
  readonly #dates: (SitemapDate | null)[] = new Array<SitemapDate | null>(SLOTS).fill(null);

  /** The date read from `text` before, or `undefined` when it is not kept. */
  get(text: string): SitemapDate | undefined {
    const slot = slotOf(text);
    return this.#texts[slot] === text ? (this.#dates[slot] as SitemapDate) : undefined;
  }

  set(text: string, date: SitemapDate): void {
    const slot = slotOf(text);
    this.#texts[slot] = text;
    this.#dates[slot] = date;
  }
}

/** A text's slot: a multiplicative hash of its length and first HASHED_CHARS characters. */
export function slotOf(text: string): number {
  const n = Math.min(text.length, HASHED_CHARS);
  let h = text.length;
  for (let i = 0; i < n; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0;
  return (h ^ (h >>> 11)) & MASK;
}

/** The process's cache of `<lastmod>` dates (urlset.ts). */
export const lastmodDates = new DateCache();
