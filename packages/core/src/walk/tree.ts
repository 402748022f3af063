import { InvalidOptionError, InvalidUrlError } from '../contract/errors.js';
import type { Page } from '../contract/model.js';
import { countingPageStore, memoryPageStore, type PageStore } from '../contract/page-store.js';
import type { ParsedDocument } from '../contract/parsed-document.js';
import type { HeaderLookup } from '../contract/plugin.js';
import type { Registry } from '../contract/registry.js';
import { IndexRobotsTxtSitemap, IndexWebsiteSitemap, type Sitemap } from '../contract/sitemap.js';
import type { SitemapDate } from '../contract/sitemap-date.js';
import type { WalkSummary } from '../contract/walk-summary.js';
import type { Warning, WarningListener } from '../contract/warning.js';
import type { WebClient } from '../contract/web-client.js';
import {
  DEFAULT_DOCUMENT_LIMITS,
  type DocumentLimits,
  type ParseDocumentOptions,
} from '../engine/document.js';
import type { Gunzip } from '../engine/gunzip.js';
import { rejectUnknownOptions } from '../engine/options.js';
import { isHttpUrl, stripUrlToHomepage } from '../engine/url.js';
import { OriginBreaker, type OriginBreakerOptions } from './origin-breaker.js';
import type { Revisit, WalkedDocument } from './revisit.js';
import {
  type Ancestry,
  type FetchResult,
  NO_ANCESTORS,
  type PageSink,
  safeKey,
  Walk,
  type WalkConfig,
  type WalkedSitemapInfo,
  type WalkStats,
} from './walk.js';

/**
 * usp 1.8.1's 14 unpublished sitemap paths, probed relative to the homepage. usp iterates them as
 * a Python set (an order that changes between processes); we probe in this fixed order, which is
 * usp's source order.
 */
export const KNOWN_SITEMAP_PATHS: readonly string[] = Object.freeze([
  'sitemap.xml',
  'sitemap.xml.gz',
  'sitemap_index.xml',
  'sitemap-index.xml',
  'sitemap_index.xml.gz',
  'sitemap-index.xml.gz',
  '.sitemap.xml',
  'sitemap',
  'admin/config/search/xmlsitemap',
  'sitemap/sitemap-index.xml',
  'sitemap_news.xml',
  'sitemap-news.xml',
  'sitemap_news.xml.gz',
  'sitemap-news.xml.gz',
]);

/** WordPress core's sitemap (5.5+), probed after the 14 with `includeWordPressSitemap`. */
export const WORDPRESS_SITEMAP_PATH = 'wp-sitemap.xml';
/** A plain-text sitemap at the root, probed with `includeSitemapTxt`. */
export const SITEMAP_TXT_PATH = 'sitemap.txt';

/** usp's recursion limit: robots.txt is level 0, a child deeper than 11 is not fetched. */
export const DEFAULT_MAX_DEPTH = 11;
export const DEFAULT_CONCURRENCY = 4;
export const DEFAULT_MAX_SITEMAPS = 10_000;
/** Pages a streaming walk buffers ahead of a slow consumer before fetching pauses. */
export const DEFAULT_STREAM_BUFFER_PAGES = 2_000;

/**
 * usp's `recurse_callback`: whether to fetch a child. `level` is the index's own level (robots.txt
 * is 0), `parentUrls` its ancestors plus itself; `lastModified` is the index entry's `<lastmod>`.
 */
export type RecurseCallback = (
  url: string,
  level: number,
  parentUrls: ReadonlySet<string>,
  lastModified: SitemapDate | null,
) => boolean;

/** usp's `recurse_list_callback`: the children to fetch, given all of one index's children. */
export type RecurseListCallback = (
  urls: string[],
  level: number,
  parentUrls: ReadonlySet<string>,
  lastModifieds: (SitemapDate | null)[],
) => string[];

export interface ConditionalValidators {
  readonly ifNoneMatch?: string;
  readonly ifModifiedSince?: string;
}

export interface ResponseInfo {
  /** The URL requested. */
  readonly url: string;
  /** The URL after redirects. */
  readonly finalUrl: string;
  readonly status: number;
  readonly headers: HeaderLookup;
}

export interface TreeOptions {
  /** How documents are fetched (`@usp-ts/fetcher`'s `createWebClient` on Node). Required. */
  readonly webClient: WebClient;
  /** The formats documents are parsed with. Required. */
  readonly registry: Registry;
  /** Fetch `<homepage>robots.txt` first (default true). */
  readonly useRobots?: boolean;
  /** Probe `KNOWN_SITEMAP_PATHS` (default true). */
  readonly useKnownPaths?: boolean;
  /**
   * The paths probed in place of `KNOWN_SITEMAP_PATHS` (default those 14), e.g. `[]` with
   * `extraKnownPaths` listing only the ones that answered last time (an incremental re-walk).
   */
  readonly knownPaths?: readonly string[];
  /**
   * More paths to probe, after the built-in ones, in the order given. A path is joined to the
   * homepage with one `/` (usp joins verbatim, so `/x.xml` gave `//x.xml`); an absolute http(s)
   * URL is probed as it is.
   */
  readonly extraKnownPaths?: readonly string[];
  /** Also probe `wp-sitemap.xml` (default false). */
  readonly includeWordPressSitemap?: boolean;
  /** Also probe `sitemap.txt` (default false). */
  readonly includeSitemapTxt?: boolean;
  /** Strip the homepage URL to `scheme://host[:port]/` (default true, as usp). */
  readonly normalizeHomepage?: boolean;
  /**
   * Walk exactly these sitemap URLs (and what their indexes name) instead of discovering them:
   * no robots.txt, no known paths. They become the homepage node's children in the order given,
   * an unreachable one kept as an `InvalidSitemap` (it was asked for, not guessed). The homepage
   * still names the root, the `same-site` policy's site and `--strip-url`'s prefix. Default: none
   * (discover).
   */
  readonly sitemaps?: readonly string[];
  readonly recurseCallback?: RecurseCallback;
  readonly recurseListCallback?: RecurseListCallback;
  /** Deepest level fetched; robots.txt is 0 (default 11, as usp). */
  readonly maxDepth?: number;
  /** Sitemaps fetched and parsed at once (default 4). */
  readonly concurrency?: number;
  /** Requests the walk may make in all (default 10,000). */
  readonly maxSitemaps?: number;
  /** Pages the walk may collect in all (default: no limit). */
  readonly maxPages?: number;
  /** Wall-clock budget of the whole walk in ms (default: none). */
  readonly deadlineMs?: number;
  /** Children read from one index (default: the document parser's limit). */
  readonly maxChildrenPerIndex?: number;
  /** Per-document parser limits. */
  readonly documentLimits?: Partial<DocumentLimits>;
  /** Aborting ends the walk with what it has; requests in flight are stopped. */
  readonly signal?: AbortSignal;
  readonly onWarning?: WarningListener;
  readonly onProgress?: (stats: WalkStats) => void;
  /** Where pages nodes keep their pages (default: memory; the `usp` package uses temp files). */
  readonly pageStore?: PageStore;
  /**
   * `'same-site'` refuses children and redirects off the homepage's site: another registrable domain
   * under the public suffix list (via tldts). Default `'any'`.
   */
  readonly hostPolicy?: 'any' | 'same-site';
  /**
   * Drop top-level probes (robots.txt, known paths) that answer with nothing: a plain-text
   * "sitemap" with no URL in it is a soft 404 (an HTML error page, an empty body). Default true;
   * usp keeps them as empty `PagesTextSitemap`s.
   */
  readonly dropSoft404?: boolean;
  /** Extra request headers. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Validators from an earlier crawl; a 304 answer becomes an InvalidSitemap saying "Not modified".
   * Superseded by `revisit` when both are given.
   */
  readonly conditionalRequest?: (url: string) => ConditionalValidators | undefined;
  /**
   * An incremental walk: validators per document, documents not to request again, and stored
   * children replayed on a 304 (see `Revisit`). Replayed pages sitemaps have no pages.
   */
  readonly revisit?: Revisit;
  /** Sees each document once its node is built (fetched, replayed or failed), before its children. */
  readonly onDocument?: (document: WalkedDocument) => void;
  /** Sees every successful response's headers (to record ETag / Last-Modified for the next crawl). */
  readonly onResponse?: (info: ResponseInfo) => void;
  /** Replaces core's `parseDocument` (for example to parse in a worker thread). */
  readonly parse?: (options: ParseDocumentOptions) => Promise<ParsedDocument>;
  readonly gunzip?: Gunzip;
  /**
   * The per-origin breaker: after a document on an origin got no HTTP response (after its
   * retries), or 3 in a row were answered 429/503, the walk stops retrying there and then stops
   * sending that origin requests; its later sitemaps become `InvalidSitemap`s saying "host
   * unreachable", with one `unreachable` warning. Thresholds (see `OriginBreakerOptions`), a
   * breaker of your own (shared by several walks), or `false` for none. Default: a new breaker
   * with the default thresholds.
   */
  readonly originBreaker?: OriginBreakerOptions | OriginBreaker | false;
}

export interface WalkPagesOptions extends TreeOptions {
  /** Pages buffered ahead of the consumer before fetching pauses (default 2,000). */
  readonly bufferPages?: number;
}

/** One page of a streaming walk, with the sitemap it came from. */
export interface WalkedPage {
  readonly page: Page;
  readonly sitemap: WalkedSitemapInfo;
}

/** The iterable a streaming walk returns; the tree's shape is there once iteration is over. */
export interface PageWalk extends AsyncIterableIterator<WalkedPage> {
  readonly stats: WalkStats;
  /** How the walk ended (`ok`, `unreachable`, `partial`) once iteration is over; `null` before. */
  readonly summary: WalkSummary | null;
  /** The tree (pages counted, not kept unless a `pageStore` was given) once the walk ended. */
  readonly tree: Sitemap | null;
}

export type { WalkedSitemapInfo, WalkStats } from './walk.js';

/**
 * Finds and parses every sitemap of a website as usp does: robots.txt, then the known paths
 * (skipping sitemaps robots.txt led to), recursing into indexes. Always resolves to an
 * `IndexWebsiteSitemap`; bad servers and bad documents become `InvalidSitemap` nodes, a stopped
 * walk (abort, deadline, budget) returns what it has. Rejects only for caller mistakes and for
 * an exception thrown by `recurseListCallback` (as usp lets it escape).
 */
export async function sitemapTreeForHomepage(
  homepageUrl: string,
  options: TreeOptions,
): Promise<IndexWebsiteSitemap> {
  const home = homepageOf(homepageUrl, options);
  const walk = new Walk(resolveConfig(options, home.url, options.pageStore ?? memoryPageStore()), null);
  return runHomepage(walk, home);
}

/**
 * Fetches one sitemap URL and everything below it (no robots.txt, no known paths). The node is
 * at level 0, as a known path would be.
 */
export async function sitemapTreeForUrl(sitemapUrl: string, options: TreeOptions): Promise<Sitemap> {
  checkUrl(sitemapUrl);
  const walk = new Walk(resolveConfig(options, sitemapUrl, options.pageStore ?? memoryPageStore()), null);
  return runSingle(walk, sitemapUrl);
}

/**
 * Streams the pages of a website as each sitemap is parsed. A consumer that stops pulling pauses
 * the parsers and therefore the downloads; breaking out of the loop stops the walk. Pages of
 * sitemaps fetched concurrently interleave (each page says which sitemap it came from).
 */
export function walkPages(homepageUrl: string, options: WalkPagesOptions): PageWalk {
  const home = homepageOf(homepageUrl, options);
  const config = resolveConfig(options, home.url, options.pageStore ?? countingPageStore(), WALK_OPTIONS);
  return new PageStream(config, bufferOf(options), (walk) => runHomepage(walk, home));
}

/** `walkPages` for one sitemap URL and its children. */
export function walkSitemapPages(sitemapUrl: string, options: WalkPagesOptions): PageWalk {
  checkUrl(sitemapUrl);
  const config = resolveConfig(options, sitemapUrl, options.pageStore ?? countingPageStore(), WALK_OPTIONS);
  return new PageStream(config, bufferOf(options), (walk) => runSingle(walk, sitemapUrl));
}

/** The URLs the walk probes for a homepage (already normalised, ending in `/`), in order. */
export function knownPathUrls(homepage: string, options: Partial<TreeOptions> = {}): string[] {
  const paths = [...(options.knownPaths ?? KNOWN_SITEMAP_PATHS)];
  if (options.includeWordPressSitemap === true) paths.push(WORDPRESS_SITEMAP_PATH);
  if (options.includeSitemapTxt === true) paths.push(SITEMAP_TXT_PATH);
  const urls = paths.map((p) => homepage + p);
  for (const extra of options.extraKnownPaths ?? []) {
    urls.push(isHttpUrl(extra) ? extra : homepage + extra.replace(/^\/+/, ''));
  }
  const seen = new Set<string>();
  return urls.filter((u) => {
    const k = safeKey(u);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
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

function bufferOf(options: WalkPagesOptions): number {
  const n = options.bufferPages ?? DEFAULT_STREAM_BUFFER_PAGES;
  if (!Number.isInteger(n) || n < 1) throw new InvalidOptionError('bufferPages', 'must be an integer >= 1');
  return n;
}

// Every key of the options types, so the tables cannot fall behind them.
const TREE_OPTIONS = {
  webClient: true,
  registry: true,
  useRobots: true,
  useKnownPaths: true,
  knownPaths: true,
  extraKnownPaths: true,
  includeWordPressSitemap: true,
  includeSitemapTxt: true,
  normalizeHomepage: true,
  sitemaps: true,
  recurseCallback: true,
  recurseListCallback: true,
  maxDepth: true,
  concurrency: true,
  maxSitemaps: true,
  maxPages: true,
  deadlineMs: true,
  maxChildrenPerIndex: true,
  documentLimits: true,
  signal: true,
  onWarning: true,
  onProgress: true,
  pageStore: true,
  hostPolicy: true,
  dropSoft404: true,
  headers: true,
  conditionalRequest: true,
  revisit: true,
  onDocument: true,
  onResponse: true,
  parse: true,
  gunzip: true,
  originBreaker: true,
} satisfies Record<keyof TreeOptions, true>;
const WALK_OPTIONS = { ...TREE_OPTIONS, bufferPages: true } satisfies Record<keyof WalkPagesOptions, true>;

function resolveConfig(
  options: TreeOptions,
  homepageUrl: string,
  pageStore: PageStore,
  known: Readonly<Record<string, true>> = TREE_OPTIONS,
): WalkConfig {
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionError('options', 'must be an object with at least webClient and registry');
  }
  rejectUnknownOptions(options, known);
  if (typeof options.webClient?.get !== 'function') {
    throw new InvalidOptionError('webClient', 'is required (an object with get(url, options))');
  }
  if (typeof options.registry?.xmlFormatFor !== 'function') {
    throw new InvalidOptionError('registry', 'is required (build one with createRegistry)');
  }
  const int = (name: string, value: number | undefined, fallback: number, min: number): number => {
    if (value === undefined) return fallback;
    if (value === Number.POSITIVE_INFINITY) return value;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
      throw new InvalidOptionError(name, `must be an integer >= ${min}`);
    }
    return value;
  };
  int('maxChildrenPerIndex', options.maxChildrenPerIndex, 1, 1);
  const deadline = options.deadlineMs;
  if (deadline !== undefined && (typeof deadline !== 'number' || !(deadline > 0))) {
    throw new InvalidOptionError('deadlineMs', 'must be a number > 0');
  }
  if (
    options.hostPolicy !== undefined &&
    options.hostPolicy !== 'any' &&
    options.hostPolicy !== 'same-site'
  ) {
    throw new InvalidOptionError('hostPolicy', "must be 'any' or 'same-site'");
  }
  for (const name of ['knownPaths', 'extraKnownPaths'] as const) {
    const paths = options[name];
    if (paths !== undefined && (!Array.isArray(paths) || paths.some((p) => typeof p !== 'string'))) {
      throw new InvalidOptionError(name, 'must be an array of strings');
    }
  }
  if (options.sitemaps !== undefined) {
    if (!Array.isArray(options.sitemaps))
      throw new InvalidOptionError('sitemaps', 'must be an array of URLs');
    for (const url of options.sitemaps) {
      if (typeof url !== 'string' || !isHttpUrl(url)) {
        throw new InvalidOptionError('sitemaps', `${JSON.stringify(url)} is not an absolute http(s) URL`);
      }
    }
  }
  for (const [key, value] of Object.entries(options.documentLimits ?? {})) {
    if (!(key in DEFAULT_DOCUMENT_LIMITS))
      throw new InvalidOptionError(`documentLimits.${key}`, 'unknown limit');
    if (value !== undefined && (typeof value !== 'number' || Number.isNaN(value) || value < 1)) {
      throw new InvalidOptionError(`documentLimits.${key}`, 'must be a number >= 1');
    }
  }
  const hooks = [
    'recurseCallback',
    'recurseListCallback',
    'onWarning',
    'onProgress',
    'parse',
    'conditionalRequest',
    'onDocument',
    'onResponse',
    'gunzip',
  ] as const;
  for (const name of hooks) {
    if (options[name] !== undefined && typeof options[name] !== 'function') {
      throw new InvalidOptionError(name, 'must be a function');
    }
  }
  const revisit = options.revisit;
  if (
    revisit !== undefined &&
    (typeof revisit?.plan !== 'function' || typeof revisit?.notModified !== 'function')
  ) {
    throw new InvalidOptionError(
      'revisit',
      'must be an object with plan(url, lastModified) and notModified(url)',
    );
  }
  const concurrency = int('concurrency', options.concurrency, DEFAULT_CONCURRENCY, 1);
  if (concurrency === Number.POSITIVE_INFINITY) throw new InvalidOptionError('concurrency', 'must be finite');
  return {
    options,
    webClient: options.webClient,
    registry: options.registry,
    maxDepth: int('maxDepth', options.maxDepth, DEFAULT_MAX_DEPTH, 0),
    concurrency,
    maxSitemaps: int('maxSitemaps', options.maxSitemaps, DEFAULT_MAX_SITEMAPS, 0),
    maxPages: int('maxPages', options.maxPages, Number.POSITIVE_INFINITY, 0),
    pageStore,
    homepageUrl,
    breaker: breakerOf(options.originBreaker),
  };
}

function breakerOf(option: TreeOptions['originBreaker']): OriginBreaker | null {
  if (option === false) return null;
  if (option instanceof OriginBreaker) return option;
  return new OriginBreaker(option ?? {});
}

async function runHomepage(walk: Walk, home: Homepage): Promise<IndexWebsiteSitemap> {
  const options = walk.config.options;
  if (home.warning !== null) {
    walk.walkWarnings.push(home.warning);
    walk.notify(home.warning);
  }
  const children: Sitemap[] = [];
  walk.start();
  try {
    if (options.sitemaps !== undefined) {
      // Fetched concurrently, kept in the order given; one named twice is fetched once.
      const seen = new Set<string>();
      const fetches = options.sitemaps
        .filter((url) => !seen.has(safeKey(url)) && seen.add(safeKey(url)))
        .map((url) => walk.fetch({ url, level: 0, ancestry: NO_ANCESTORS, lastModified: null }));
      for (const fetched of fetches) children.push((await fetched).node);
      throwIfFatal(walk);
      return new IndexWebsiteSitemap({ url: home.url, subSitemaps: children, warnings: walk.walkWarnings });
    }
    let ancestry: Ancestry = NO_ANCESTORS;
    if (options.useRobots ?? true) {
      const robots = await walk.fetch({
        url: `${home.url}robots.txt`,
        level: 0,
        ancestry: NO_ANCESTORS,
        lastModified: null,
        quiet404: true,
      });
      throwIfFatal(walk);
      if (keepTopLevel(walk, robots)) children.push(robots.node);
      if (robots.node instanceof IndexRobotsTxtSitemap) ancestry = descendantsOf(robots);
    }
    if (options.useKnownPaths ?? true) {
      const probes = knownPathUrls(home.url, options)
        .filter((url) => !ancestry.keys.has(safeKey(url)))
        .map((url) => walk.fetch({ url, level: 0, ancestry, lastModified: null, quiet404: true }));
      // Probed concurrently; kept in the fixed order of the list.
      for (const probe of probes) {
        const result = await probe;
        if (keepTopLevel(walk, result)) children.push(result.node);
      }
      throwIfFatal(walk);
    }
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
    const result = await walk.fetch({ url, level: 0, ancestry: NO_ANCESTORS, lastModified: null });
    throwIfFatal(walk);
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

/** usp drops invalid top-level results; we also drop soft 404s (see `dropSoft404`). */
function keepTopLevel(walk: Walk, result: FetchResult): boolean {
  const node = result.node;
  if (node.type === 'InvalidSitemap') return false;
  if ((walk.config.options.dropSoft404 ?? true) && node.type === 'PagesTextSitemap' && node.pageCount === 0) {
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
  const urls = new Set<string>();
  const keys = new Set<string>();
  for (const s of robots.node.allSitemaps()) {
    urls.add(s.url);
    keys.add(safeKey(s.url));
  }
  return { keys, urls };
}

// ---------------------------------------------------------------------------------------------

/** The async iterator of `walkPages`: a bounded queue between the walk's parsers and the consumer. */
class PageStream implements PageWalk {
  readonly #walk: Walk;
  readonly #highWater: number;
  readonly #run: (walk: Walk) => Promise<Sitemap>;
  readonly #queue: { pages: Page[]; sitemap: WalkedSitemapInfo }[] = [];
  #queued = 0;
  #batch: Page[] = [];
  #batchInfo: WalkedSitemapInfo | null = null;
  #pos = 0;
  #spaceWaiters: (() => void)[] = [];
  #dataWaiter: (() => void) | null = null;
  #running: Promise<void> | null = null;
  #finished = false;
  #error: { error: unknown } | null = null;
  #tree: Sitemap | null = null;

  constructor(config: WalkConfig, highWater: number, run: (walk: Walk) => Promise<Sitemap>) {
    this.#highWater = highWater;
    this.#run = run;
    this.#walk = new Walk(config, this.#sink);
  }

  get stats(): WalkStats {
    return this.#walk.stats;
  }

  get tree(): Sitemap | null {
    return this.#tree;
  }

  get summary(): WalkSummary | null {
    return this.#finished ? this.#walk.summary : null;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  readonly #sink: PageSink = (pages, sitemap) => {
    this.#queue.push({ pages, sitemap });
    this.#queued += pages.length;
    this.#wakeConsumer();
    if (this.#queued < this.#highWater || this.#walk.signal.aborted) return;
    return new Promise<void>((resolve) => this.#spaceWaiters.push(resolve));
  };

  #wakeConsumer(): void {
    const w = this.#dataWaiter;
    this.#dataWaiter = null;
    w?.();
  }

  #wakeProducers(): void {
    for (const w of this.#spaceWaiters.splice(0)) w();
  }

  #start(): void {
    if (this.#running !== null) return;
    this.#running = this.#run(this.#walk).then(
      (tree) => {
        this.#tree = tree;
        this.#finished = true;
        this.#wakeConsumer();
      },
      (error: unknown) => {
        this.#error = { error };
        this.#finished = true;
        this.#wakeConsumer();
      },
    );
  }

  async next(): Promise<IteratorResult<WalkedPage>> {
    this.#start();
    for (;;) {
      if (this.#pos < this.#batch.length) {
        const page = this.#batch[this.#pos++];
        return { done: false, value: { page, sitemap: this.#batchInfo! } };
      }
      const entry = this.#queue.shift();
      if (entry !== undefined) {
        this.#batch = entry.pages;
        this.#batchInfo = entry.sitemap;
        this.#pos = 0;
        this.#queued -= entry.pages.length;
        if (this.#queued < this.#highWater) this.#wakeProducers();
        continue;
      }
      this.#batch = [];
      if (this.#finished) {
        if (this.#error !== null) {
          const { error } = this.#error;
          this.#error = null;
          throw error;
        }
        return { done: true, value: undefined };
      }
      await new Promise<void>((resolve) => {
        this.#dataWaiter = resolve;
      });
    }
  }

  /** The consumer left (`break`): stop fetching, wait for in-flight work to wind down. */
  async return(): Promise<IteratorResult<WalkedPage>> {
    this.#walk.stop(null);
    this.#wakeProducers();
    this.#queue.length = 0;
    this.#queued = 0;
    this.#batch = [];
    if (this.#running !== null) await this.#running;
    this.#error = null;
    this.#finished = true;
    return { done: true, value: undefined };
  }

  async throw(error?: unknown): Promise<IteratorResult<WalkedPage>> {
    await this.return();
    throw error;
  }
}
