import { InvalidUrlError } from '../contract/errors.js';
import { countingPageStore, memoryPageStore } from '../contract/page-store.js';
import {
  AbstractIndexSitemap,
  IndexRobotsTxtSitemap,
  IndexWebsiteSitemap,
  type PagesTextSitemap,
  type Sitemap,
} from '../contract/sitemap.js';
import type { Warning } from '../contract/warning.js';
import { isHttpUrl, stripUrlToHomepage } from '../engine/url.js';
import { type Ancestry, NO_ANCESTORS, safeKey } from './ancestry.js';
import { bufferOf, resolveWalkConfig, WALK_OPTIONS } from './config.js';
import { knownPathUrls } from './known-paths.js';
import type { TreeOptions, WalkPagesWithClientOptions } from './options.js';
import { PageStream } from './page-stream.js';
import type { PageWalk } from './page-walk.js';
import type { FetchResult } from './task.js';
import { TreePlace } from './tree-order.js';
import { Walk } from './walk.js';

/**
 * Finds and parses every sitemap of a website as usp does: robots.txt, then the known paths
 * (skipping sitemaps robots.txt led to), recursing into indexes. Always resolves to an
 * `IndexWebsiteSitemap`; bad servers and bad documents become `InvalidSitemap` nodes, a stopped
 * walk (abort, deadline, budget) returns what it has. Rejects only for caller mistakes and for
 * an exception thrown by `recurseListCallback` (as usp lets it escape).
 */
export async function sitemapTreeForHomepageWithClient(
  homepageUrl: string,
  options: TreeOptions,
): Promise<IndexWebsiteSitemap> {
  const home = homepageOf(homepageUrl, options);
  const walk = new Walk(resolveWalkConfig(options, home.url, options.pageStore ?? memoryPageStore()), null);
  return runHomepage(walk, home);
}

/**
 * Fetches one sitemap URL and everything below it (no robots.txt, no known paths). The node is
 * at level 0, as a known path would be.
 */
export async function sitemapTreeForUrlWithClient(
  sitemapUrl: string,
  options: TreeOptions,
): Promise<Sitemap> {
  checkUrl(sitemapUrl);
  const walk = new Walk(resolveWalkConfig(options, sitemapUrl, options.pageStore ?? memoryPageStore()), null);
  return runSingle(walk, sitemapUrl);
}

/**
 * Streams the pages of a website as each sitemap is parsed. A consumer that stops pulling pauses
 * the parsers and therefore the downloads; breaking out of the loop stops the walk. Pages of
 * sitemaps fetched concurrently interleave (each page says which sitemap it came from).
 */
export function walkPagesWithClient(homepageUrl: string, options: WalkPagesWithClientOptions): PageWalk {
  const home = homepageOf(homepageUrl, options);
  const config = resolveWalkConfig(options, home.url, options.pageStore ?? countingPageStore(), WALK_OPTIONS);
  return new PageStream(config, bufferOf(options), (walk) => runHomepage(walk, home));
}

/** `walkPagesWithClient` for one sitemap URL and its children. */
export function walkSitemapPagesWithClient(
  sitemapUrl: string,
  options: WalkPagesWithClientOptions,
): PageWalk {
  checkUrl(sitemapUrl);
  const config = resolveWalkConfig(
    options,
    sitemapUrl,
    options.pageStore ?? countingPageStore(),
    WALK_OPTIONS,
  );
  return new PageStream(config, bufferOf(options), (walk) => runSingle(walk, sitemapUrl));
}

// ---------------------------------------------------------------------------------------------

interface Homepage {
  readonly url: string;
  readonly warning: Warning | null;
}

function checkUrl(url: string): void {
  if (typeof url !== 'string' || !isHttpUrl(url)) throw new InvalidUrlError(String(url));
}

function homepageOf(input: string, options: TreeOptions): Homepage {
  checkUrl(input);
  let url = input;
  let warning: Warning | null = null;
  if (options.normalizeHomepage ?? true) {
    url = stripUrlToHomepage(input);
    // usp also warns when only the final `/` was added; that says nothing worth a warning.
    if (url !== input && url !== `${input}/`) {
      warning = { code: 'homepage', message: `Assuming that the homepage of ${input} is ${url}`, url: input };
    }
  }
  if (!url.endsWith('/')) url += '/';
  return { url, warning };
}

async function runHomepage(walk: Walk, home: Homepage): Promise<IndexWebsiteSitemap> {
  const config = walk.config;
  const order = walk.treeOrder;
  /** A top-level place: it holds its node only if the root will (see `keepTopLevel`). */
  const topPlace = () => (order === null ? undefined : new TreePlace((node) => keptAtTopLevel(walk, node)));
  if (home.warning !== null) {
    walk.walkWarnings.push(home.warning);
    walk.notify(home.warning);
  }
  const children: Sitemap[] = [];
  walk.start();
  try {
    if (config.sitemaps !== null) {
      // Fetched concurrently, kept in the order given; one named twice is fetched once.
      const seen = new Set<string>();
      const places: TreePlace[] = [];
      const fetches = config.sitemaps
        .filter((url) => !seen.has(safeKey(url)) && seen.add(safeKey(url)))
        .map((url) => {
          const place = order === null ? undefined : new TreePlace();
          if (place !== undefined) places.push(place);
          return walk.fetch({ url, level: 0, ancestry: NO_ANCESTORS, lastModified: null, place });
        });
      order?.add(places, 1);
      for (const fetched of fetches) children.push((await fetched).node);
      throwIfFatal(walk);
      await order?.done();
      return new IndexWebsiteSitemap({ url: home.url, subSitemaps: children, warnings: walk.walkWarnings });
    }
    let ancestry: Ancestry = NO_ANCESTORS;
    let robotsNamedSitemaps = false;
    if (config.useRobots) {
      const place = topPlace();
      if (place !== undefined) order?.add([place], 1);
      const robots = await walk.fetch({
        url: `${home.url}robots.txt`,
        level: 0,
        ancestry: NO_ANCESTORS,
        lastModified: null,
        quiet404: true,
        place,
      });
      throwIfFatal(walk);
      if (keepTopLevel(walk, robots)) children.push(robots.node);
      if (robots.node instanceof IndexRobotsTxtSitemap) {
        ancestry = descendantsOf(robots);
        robotsNamedSitemaps = (robots.listed ?? 0) > 0;
      }
    }
    if (config.knownPaths !== null && !(config.knownPathsFallback && robotsNamedSitemaps)) {
      const places: TreePlace[] = [];
      const probes = knownPathUrls(home.url, config.knownPaths)
        .filter((url) => !ancestry.keys.has(safeKey(url)))
        .map((url) => {
          const place = topPlace();
          if (place !== undefined) places.push(place);
          return walk.fetch({ url, level: 0, ancestry, lastModified: null, quiet404: true, place });
        });
      order?.add(places, 1);
      // Probed concurrently; kept in the fixed order of the list.
      for (const probe of probes) {
        const result = await probe;
        if (keepTopLevel(walk, result)) children.push(result.node);
      }
      throwIfFatal(walk);
    }
    await order?.done();
  } finally {
    walk.finish();
  }
  return new IndexWebsiteSitemap({
    url: home.url,
    subSitemaps: children,
    warnings: walk.walkWarnings,
    summary: walk.summary,
  });
}

async function runSingle(walk: Walk, url: string): Promise<Sitemap> {
  walk.start();
  try {
    const order = walk.treeOrder;
    const place = order === null ? undefined : new TreePlace();
    if (place !== undefined) order?.add([place], 0);
    const result = await walk.fetch({ url, level: 0, ancestry: NO_ANCESTORS, lastModified: null, place });
    throwIfFatal(walk);
    await order?.done();
    result.node.warnings.push(...walk.walkWarnings);
    return result.node;
  } finally {
    walk.finish();
  }
}

function throwIfFatal(walk: Walk): void {
  const fatal = walk.fatal;
  if (fatal !== null) throw fatal.error;
}

/** Whether the root keeps a top-level node: what `keepTopLevel` decides, without its effects. */
function keptAtTopLevel(walk: Walk, node: Sitemap): boolean {
  return node.type !== 'InvalidSitemap' && !softNotFound(walk, node);
}

/** A plain-text probe with no URL in it (see `dropSoft404`). */
function softNotFound(walk: Walk, node: Sitemap): node is PagesTextSitemap {
  return walk.config.dropSoft404 && node.type === 'PagesTextSitemap' && node.pageCount === 0;
}

/** usp drops invalid top-level results; we also drop soft 404s (see `dropSoft404`). */
function keepTopLevel(walk: Walk, result: FetchResult): boolean {
  const node = result.node;
  if (node.type === 'InvalidSitemap') return false;
  if (softNotFound(walk, node)) {
    const warning: Warning = {
      code: 'soft-404',
      message: `${result.requestedUrl} answered ${result.contentType ?? 'without a Content-Type'} with no sitemap URL in it: not a sitemap`,
      url: node.url,
    };
    walk.walkWarnings.push(warning);
    walk.notify(warning);
    node.releasePages();
    return false;
  }
  return true;
}

/**
 * What robots.txt led to, as usp's known-path pass sees it: node URLs (usp's `all_sitemaps()`,
 * invalid ones included) as the parents of every known path; their keys skip known paths already
 * fetched.
 */
function descendantsOf(robots: FetchResult): Ancestry {
  const ancestry = { keys: new Set<string>(), urls: new Set<string>() };
  addDescendants(robots.node, ancestry);
  return ancestry;
}

/** `allSitemaps()`'s order without its nested generators (one per node, per site of a batch). */
function addDescendants(node: Sitemap, into: { keys: Set<string>; urls: Set<string> }): void {
  if (!(node instanceof AbstractIndexSitemap)) return;
  for (const s of node.subSitemaps) {
    into.urls.add(s.url);
    into.keys.add(safeKey(s.url));
    addDescendants(s, into);
  }
}
