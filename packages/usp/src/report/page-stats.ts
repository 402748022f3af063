import { CHANGE_FREQUENCIES, type Page } from '@usp-ts/core';

const DAY_MS = 86_400_000;
/** Days shown one bar each, ending today. */
export const RECENT_DAYS = 60;
/** Freshness windows: the share of pages whose `lastmod` lies within each, in days. */
export const FRESHNESS_DAYS = [7, 30, 365] as const;
/**
 * Pages with alternates whose return links are checked. Each one costs its URL and its
 * alternates' hrefs in memory, so a site with a million of them is checked on a prefix (the
 * report says how many were checked) instead of holding them all.
 */
export const MAX_HREFLANG_PAGES = 50_000;

/** Exact counts over every page of a walk, filled one page at a time in constant memory per page. */
export interface PageStatsData {
  pages: number;
  withLastmod: number;
  futureLastmod: number;
  /** `YYYY-MM` -> pages. */
  lastmodByMonth: Record<string, number>;
  /** `YYYY-MM-DD` -> pages, the last RECENT_DAYS days up to the report's day. */
  lastmodByDay: Record<string, number>;
  /** Days -> pages whose lastmod is at most that old (and not in the future). */
  freshWithin: Record<string, number>;
  /** changefreq (or `none`) -> pages. */
  changefreq: Record<string, number>;
  /** Priority rounded to one decimal (`0.5`) -> pages. */
  priority: Record<string, number>;
  newsStories: number;
  /** `YYYY-MM-DD` of the story's publication date -> stories. */
  newsByDay: Record<string, number>;
  /** Publication name (or `(none)`) -> stories. */
  newsByPublication: Record<string, number>;
  withImages: number;
  images: number;
  withVideos: number;
  withAlternates: number;
  /** hreflang value -> pages naming it. */
  hreflang: Record<string, number>;
  /** Pages with alternates checked for return links (at most MAX_HREFLANG_PAGES). */
  hreflangChecked: number;
  /** Of those, pages naming an alternate (in the walk) that does not name them back. */
  missingReturnLinks: number;
  /** A few of them: the page and the alternate that does not link back. */
  missingReturnExamples: { page: string; alternate: string }[];
}

function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

/** Distinct days whose `YYYY-MM-DD` is kept: a site's lastmods fall on a few thousand at most. */
const MAX_DAY_KEYS = 100_000;

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Counts what a report shows of pages; `now` fixes "today" (tests pass their own). */
export class PageStats {
  readonly data: PageStatsData;
  readonly #now: number;
  readonly #firstRecentDay: number;
  /**
   * Day number -> `YYYY-MM-DD`: one `Date` and ISO string a distinct day instead of one a page
   * (a million on a large site).
   */
  readonly #dayKeys = new Map<number, string>();
  /** Pages per priority tenth (0 to 10); named at `finish`. */
  readonly #priorityTenths = new Array<number>(11).fill(0);
  /** Checked page URL -> the hrefs of its alternates (other than itself). */
  readonly #alternates = new Map<string, string[]>();

  constructor(now: number = Date.now()) {
    this.#now = now;
    this.#firstRecentDay = Math.floor(now / DAY_MS) - (RECENT_DAYS - 1);
    this.data = {
      pages: 0,
      withLastmod: 0,
      futureLastmod: 0,
      lastmodByMonth: {},
      lastmodByDay: {},
      freshWithin: Object.fromEntries(FRESHNESS_DAYS.map((d) => [String(d), 0])),
      changefreq: Object.fromEntries([...CHANGE_FREQUENCIES, 'none'].map((c) => [c, 0])),
      priority: {},
      newsStories: 0,
      newsByDay: {},
      newsByPublication: {},
      withImages: 0,
      images: 0,
      withVideos: 0,
      withAlternates: 0,
      hreflang: {},
      hreflangChecked: 0,
      missingReturnLinks: 0,
      missingReturnExamples: [],
    };
  }

  add(page: Page): void {
    const d = this.data;
    d.pages++;
    this.#lastmod(page);
    bump(d.changefreq, page.changeFrequency ?? 'none');
    this.#priorityTenths[Math.round(page.priority * 10)]++;
    const story = page.newsStory;
    if (story !== null) {
      d.newsStories++;
      if (story.publishDate !== null) bump(d.newsByDay, isoDay(story.publishDate.epochMs));
      bump(d.newsByPublication, story.publicationName ?? '(none)');
    }
    if (page.images !== null) {
      d.withImages++;
      d.images += page.images.length;
    }
    const videos = (page.extensions as { videos?: readonly unknown[] } | undefined)?.videos;
    if (videos !== undefined && videos.length > 0) d.withVideos++;
    if (page.alternates !== null) this.#alternatesOf(page);
  }

  #lastmod(page: Page): void {
    const d = this.data;
    const lastmod = page.lastModified;
    if (lastmod === null) return;
    d.withLastmod++;
    const ms = lastmod.epochMs;
    const day = Math.floor(ms / DAY_MS);
    let key = this.#dayKeys.get(day);
    if (key === undefined) {
      key = isoDay(day * DAY_MS);
      if (this.#dayKeys.size < MAX_DAY_KEYS) this.#dayKeys.set(day, key);
    }
    bump(d.lastmodByMonth, key.slice(0, 7));
    if (ms > this.#now) {
      d.futureLastmod++;
      return;
    }
    if (day >= this.#firstRecentDay) bump(d.lastmodByDay, key);
    const ageDays = (this.#now - ms) / DAY_MS;
    for (const days of FRESHNESS_DAYS) if (ageDays <= days) d.freshWithin[days]++;
  }

  #alternatesOf(page: Page): void {
    const d = this.data;
    d.withAlternates++;
    const hrefs: string[] = [];
    for (const a of page.alternates ?? []) {
      bump(d.hreflang, a.hreflang);
      if (a.href !== page.url) hrefs.push(a.href);
    }
    if (d.hreflangChecked < MAX_HREFLANG_PAGES) {
      d.hreflangChecked++;
      this.#alternates.set(page.url, hrefs);
    }
  }

  /**
   * Finds the checked pages whose alternate is a page of the walk that does not name them back.
   * An alternate the walk did not list cannot be judged and is not counted.
   */
  finish(): PageStatsData {
    const d = this.data;
    this.#priorityTenths.forEach((n, tenth) => {
      if (n > 0) d.priority[(tenth / 10).toFixed(1)] = n;
    });
    for (const [url, hrefs] of this.#alternates) {
      for (const href of hrefs) {
        const back = this.#alternates.get(href);
        if (back === undefined || back.includes(url)) continue;
        d.missingReturnLinks++;
        if (d.missingReturnExamples.length < 20) d.missingReturnExamples.push({ page: url, alternate: href });
        break;
      }
    }
    this.#alternates.clear();
    return d;
  }
}
