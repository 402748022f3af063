import type { Page } from './model.js';

/**
 * Where a pages sitemap keeps its pages. The tree asks a store for a writer per pages
 * sitemap; the node reads them back on access. Core ships the in-memory store and a
 * counting one; Node users get a temp-file store from the `usp` package (memory stays flat).
 */
export interface PageStore {
  open(sitemapUrl: string): PageWriter;
}

export interface PageWriter {
  append(page: Page): void;
  /**
   * The same as `append` for each page in order; a store that can take a whole batch at once
   * implements it, and the walk then calls it instead of `append`. `encoded`, when given, is the
   * same pages already in some store's own form (see {@link EncodedPages}): a store that knows
   * its `format` may copy its bytes instead of encoding every page again, any other ignores it.
   */
  appendPages?(pages: readonly Page[], encoded?: EncodedPages): void;
  close(): StoredPages;
}

/**
 * A batch of pages as a store encodes them, made where the pages were parsed: `usp`'s parse
 * workers encode a batch of ordinary pages in its temp-file store's records on their thread, and
 * the walk hands them with the pages to `PageWriter.appendPages`, so the store copies bytes
 * instead of encoding each page again on the walk's thread. Exactly the batch's pages, in order;
 * a batch cut short (the walk's `maxPages`) travels without them.
 */
export interface EncodedPages {
  /** Names the encoding; a store reads `bytes` only when it is its own. */
  readonly format: string;
  readonly bytes: Uint8Array;
}

/**
 * The pages' URLs as chunks of whole lines of UTF-8 bytes. `next(true)` tells the store the
 * previous chunk is written out (nothing holds it), so its buffer may be filled again.
 */
export type UrlLines = Generator<Uint8Array, void, boolean | undefined>;

export interface UrlLinesOptions {
  /** Written before each URL (tabs of a tree's depth). */
  readonly indent: string;
  /**
   * ASCII text taken off the start of each URL that has it, then a `/` put first if what is
   * left does not start with one (as `usp --strip-url` prints); `''` for none.
   */
  readonly stripPrefix: string;
  /**
   * An object (`{}` to start) the caller keeps for one print and passes for every sitemap of
   * it: the store keeps its buffers on it from one sitemap to the next. One print at a time.
   */
  readonly scratch?: object;
}

export interface StoredPages {
  readonly count: number;
  /** Fresh array of the pages; throws a `UspError` if they were discarded. */
  load(): Page[];
  /**
   * The pages one at a time, for stores that can do better than `load()`: a file-backed store
   * reads its file in bounded chunks, so printing a 50,000-page sitemap never holds all of them.
   */
  iterate?(): Iterable<Page>;
  /**
   * The URLs of the pages as lines ready to print, for a store that keeps pages as bytes
   * (`usp`'s temp-file store): printing a site's URL list then makes no page object. A store
   * without it is printed from `iterate()` or `load()`.
   */
  urlLines?(options: UrlLinesOptions): UrlLines;
  /** Frees what the pages hold (a file, memory). Loading afterwards returns `[]`. */
  release?(): void;
}

/** Keeps pages in memory: the simplest store, and the one a browser uses. */
export function memoryPageStore(): PageStore {
  return {
    open() {
      let pages: Page[] = [];
      return {
        append(page) {
          pages.push(page);
        },
        close() {
          return {
            get count() {
              return pages.length;
            },
            load: () => pages.slice(),
            release() {
              pages = [];
            },
          };
        },
      };
    },
  };
}

/** Counts pages and keeps none: for callers who stream pages and want only the tree's shape. */
export function countingPageStore(): PageStore {
  return {
    open() {
      let count = 0;
      return {
        append() {
          count++;
        },
        close: () => ({ count, load: () => [] }),
      };
    },
  };
}

/** Wraps pages already in hand (used for nodes built directly). */
export function storedPages(pages: readonly Page[]): StoredPages {
  return { count: pages.length, load: () => pages.slice() };
}
