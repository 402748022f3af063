import {
  type IndexWebsiteSitemap,
  InvalidSitemap,
  OK_SUMMARY,
  stripUrlToHomepage,
  type TreeNodeEvent,
  type WalkStats,
  type WalkSummary,
} from '@usp-ts/core';
import { type SitemapTreeOptions, sitemapTreeForHomepage, walkPages } from '../api/tree.js';
import type { Log, Progress, ProgressCounts } from './log.js';
import {
  CSV_HEADER,
  csvLine,
  type Format,
  ndjsonLine,
  type Output,
  shown,
  stripUrl,
  TabTreePrinter,
  writeTree,
} from './output.js';

/**
 * Formats printed as pages arrive. `pages` prints the same lines as usp (which prints them after
 * the tree) in arrival order: each sitemap's pages in document order, the pages of sitemaps
 * fetched at the same time interleaved. tabtree and json print in tree order (see `runListing`).
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
  const rootUrl = homepagePrefix(url, run.options.normalizeHomepage ?? true);
  const printer = format === 'tabtree' ? new TabTreePrinter(out, strip ? rootUrl : '') : null;
  let printed = false;
  const options: SitemapTreeOptions = {
    ...run.options,
    onWarning: (w) => log.warning(w),
    onProgress: (stats) => progress.update(progressCounts(stats)),
    onResponse: (info) => {
      log.release();
      log.debug(
        `${info.status} ${info.finalUrl}${info.finalUrl === info.url ? '' : ` (requested ${info.url})`}`,
      );
    },
    // tabtree is written as the walk reports its nodes in tree order: each sitemap once it and
    // everything before it is read, while later ones are still parsed (the print no longer waits
    // for the whole walk, then runs alone on one thread).
    ...(printer !== null
      ? {
          onTreeNode: async ({ node, depth }: TreeNodeEvent) => {
            if (!printed) {
              printed = true;
              await out.line(shown(out, rootUrl));
            }
            await printer.node(node, depth);
          },
        }
      : {}),
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
  if (printer === null) await writeTree(out, tree, format, strip ? tree.url : '');
  else {
    if (tree.url !== rootUrl) throw new Error(`usp: the tree's root ${tree.url} is not ${rootUrl}`);
    if (!printed) await out.line(shown(out, rootUrl));
    await out.flush();
  }
  log.info(`${sitemaps} sitemaps in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { tree, summary: tree.summary };
}
