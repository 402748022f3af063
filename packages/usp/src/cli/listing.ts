import {
  type IndexWebsiteSitemap,
  InvalidSitemap,
  OK_SUMMARY,
  stripUrlToHomepage,
  type WalkStats,
  type WalkSummary,
} from '@usp-ts/core';
import { type SitemapTreeOptions, sitemapTreeForHomepage, walkPages } from '../tree.js';
import type { Log, Progress, ProgressCounts } from './log.js';
import {
  CSV_HEADER,
  csvLine,
  type Format,
  ndjsonLine,
  type Output,
  shown,
  stripUrl,
  writeTree,
} from './output.js';

/**
 * Formats printed as pages arrive. `pages` prints the same lines as usp (which prints them after
 * the tree) in arrival order: each sitemap's pages in document order, the pages of sitemaps
 * fetched at the same time interleaved. tabtree and json need the finished tree.
 */
export const STREAMED: ReadonlySet<Format> = new Set<Format>(['pages', 'ndjson', 'csv']);

/** The prefix `--strip-url` removes: the homepage as the tree will normalise it. */
export function homepagePrefix(url: string, normalize: boolean): string {
  if (normalize) return stripUrlToHomepage(url);
  return url.endsWith('/') ? url : `${url}/`;
}

export function progressCounts(stats: WalkStats): Partial<ProgressCounts> {
  return {
    sitemapsDone: stats.sitemapsDone,
    sitemapsQueued: stats.sitemapsQueued + stats.sitemapsInFlight,
    pages: stats.pages,
    bytes: stats.bytes,
  };
}

export interface LsRun {
  url: string;
  format: Format;
  strip: boolean;
  options: SitemapTreeOptions;
  log: Log;
  progress: Progress;
  out: Output;
}

export interface Listing {
  /** The tree, unless the format streamed. */
  readonly tree: IndexWebsiteSitemap | null;
  readonly summary: WalkSummary;
}

/** Lists a site; shared by `ls` and `demo`. */
export async function runListing(run: LsRun): Promise<Listing> {
  const { url, format, strip, log, progress, out } = run;
  const options: SitemapTreeOptions = {
    ...run.options,
    onWarning: (w) => log.warning(w),
    onProgress: (stats) => progress.update(progressCounts(stats)),
    onResponse: (info) =>
      log.debug(
        `${info.status} ${info.finalUrl}${info.finalUrl === info.url ? '' : ` (requested ${info.url})`}`,
      ),
  };
  const started = Date.now();
  if (STREAMED.has(format)) {
    const prefix = strip ? homepagePrefix(url, options.normalizeHomepage ?? true) : '';
    if (format === 'csv') await out.line(CSV_HEADER);
    let pages = 0;
    const walk = walkPages(url, options);
    for await (const { page, sitemap } of walk) {
      pages++;
      const p = out.line(
        format === 'pages'
          ? shown(out, stripUrl(page.url, prefix))
          : format === 'csv'
            ? csvLine(page, sitemap.url, prefix)
            : ndjsonLine(page, sitemap.url, prefix),
      );
      if (p) await p;
    }
    await out.flush();
    progress.clear();
    log.info(`${pages} pages in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const summary = walk.summary ?? OK_SUMMARY;
    // The shape of the walk (pages counted, not kept): what `demo` summarises after `pages`.
    if (format !== 'pages' || walk.tree === null) return { tree: null, summary };
    for (const s of walk.tree.allSitemaps()) {
      if (s instanceof InvalidSitemap) log.info(`Invalid sitemap: ${s.url}, reason: ${s.reason}`);
    }
    return { tree: walk.tree as IndexWebsiteSitemap, summary };
  }
  const tree = await sitemapTreeForHomepage(url, options);
  progress.clear();
  let sitemaps = 0;
  for (const s of tree.allSitemaps()) {
    sitemaps++;
    if (s instanceof InvalidSitemap) log.info(`Invalid sitemap: ${s.url}, reason: ${s.reason}`);
  }
  await writeTree(out, tree, format, strip ? tree.url : '');
  log.info(`${sitemaps} sitemaps in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { tree, summary: tree.summary };
}
