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
   * (the `usp` temp-file store copies a parse worker's encoded batch) implements it, and the
   * walk then calls it instead of `append`.
   */
  appendPages?(pages: readonly Page[]): void;
  close(): StoredPages;
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
