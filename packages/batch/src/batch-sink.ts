import type { RunMark } from '@usp-ts/core';
import type { PageRow, SitemapRow, SiteResult } from './rows.js';

/**
 * Where a batch's rows go. Each site's rows are held by its `SiteOutput` until the walk ends, and
 * kept all together (or not at all): that is what makes a resumed run write each site once.
 * `ndjsonSink(dir)` writes files; `memorySink()` keeps arrays (tests, small runs).
 */
export interface BatchSink {
  /** Starts one site's output. */
  begin(site: string): SiteOutput;
}

/**
 * Names one copy of a site's output when the site is a queue job that may be walked more than once
 * (a worker killed after writing it, before the queue recorded the job as done). A sink that can
 * keep it (the NDJSON sink's journal) does, so that a reader, or a resumed run, drops void copies.
 */
export interface CopyTag {
  /** This copy's name: an id of the try of the job that wrote it, used by no other copy. */
  readonly token: string;
  /** Tokens of earlier copies of the same job that this one makes void. */
  readonly voids: readonly string[];
}

export interface SiteOutput {
  /**
   * One page row. `json`, when given, is `JSON.stringify(row)`, made by the caller as it read the
   * page; a sink that writes JSON may use it instead of serialising the row again.
   */
  page(row: PageRow, json?: string): void;
  sitemap(row: SitemapRow): void;
  /**
   * Keeps the site's rows and its result row. `saveState` is called once the rows are written and
   * before the commit is final, with the mark that ties the state to this output: a crash in
   * between leaves a state that a resumed run recognises (see `StateStore.lastMark`). `copy`
   * names this copy of a queue job's site (see `CopyTag`).
   */
  commit(result: SiteResult, saveState?: (mark: RunMark) => Promise<void>, copy?: CopyTag): Promise<void>;
  /** Drops the rows (an interrupted walk is walked again). */
  discard(): void;
}

/** The rows of a `memorySink`, in commit order. */
export interface MemoryRows {
  readonly pages: PageRow[];
  readonly sitemaps: SitemapRow[];
  readonly sites: SiteResult[];
}

/** Keeps committed rows in arrays. */
export function memorySink(runId = 'memory'): BatchSink & { readonly rows: MemoryRows } {
  const rows: MemoryRows = { pages: [], sitemaps: [], sites: [] };
  return {
    rows,
    begin() {
      const pages: PageRow[] = [];
      const sitemaps: SitemapRow[] = [];
      return {
        page: (row) => pages.push(row),
        sitemap: (row) => sitemaps.push(row),
        async commit(result, saveState) {
          rows.pages.push(...pages);
          rows.sitemaps.push(...sitemaps);
          rows.sites.push(result);
          const offsets = {
            pages: rows.pages.length,
            sitemaps: rows.sitemaps.length,
            sites: rows.sites.length,
          };
          await saveState?.({ runId, site: result.site, offsets });
        },
        discard() {
          pages.length = 0;
          sitemaps.length = 0;
        },
      };
    },
  };
}
