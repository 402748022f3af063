import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import {
  type IndexWebsiteSitemap,
  InvalidOptionError,
  type PageWalk,
  type Registry,
  type Sitemap,
  sitemapTreeForHomepageWithClient,
  sitemapTreeForUrlWithClient,
  type TreeOptions,
  type WalkedPage,
  type WalkPagesWithClientOptions,
  type WalkStats,
  type WalkSummary,
  type WebClient,
  walkPagesWithClient,
  walkSitemapPagesWithClient,
} from '@usp-ts/core';
import { createWebClient, hostIsPrivate, type WebClientOptions, webClientOptionName } from '@usp-ts/fetcher';
import { nodeGunzip } from '../node/gunzip.js';
import { filePageStore } from '../pages/file-store.js';
import { createDefaultRegistry } from '../plugins/defaults.js';
import { importPlugins, registryWithPlugins } from '../plugins/modules.js';
import { createStoringWorkerParser, createWorkerParser, type WorkerParser } from '../worker/pool.js';

/**
 * Core's tree options with Node defaults filled in: an undici client, every format, pages kept
 * in temp files (memory stays flat however large the site).
 */
export type SitemapTreeOptions = Omit<TreeOptions, 'webClient' | 'registry' | 'headers'> & {
  /** Your own client; it is left open. Default: `createWebClient(webClientOptions)`, closed when done. */
  webClient?: WebClient;
  /**
   * Options for the default client: every network setting lives here, and only here (user agent,
   * `headers`, `requestTimeoutMs`, `retries`, `proxy`, `tlsVerify`, private networks, ...). One
   * given beside the walk's options is refused, pointing here.
   */
  webClientOptions?: WebClientOptions;
  /** Default: {@link createDefaultRegistry}, with `pluginModules` added. */
  registry?: Registry;
  /**
   * ES modules (URLs: see `resolvePluginModule` for paths and package names) whose default export
   * is a plugin factory or a list of plugins, added to the default registry (formats first,
   * extensions beside Google News, Image and Video); the parse workers load them too. Ignored
   * with `registry`. Default none.
   */
  pluginModules?: readonly string[];
  /**
   * Worker threads that parse large documents while another one is being parsed in this thread
   * (a second core's worth of parsing when several sitemaps are in flight). Default 1 on a machine
   * with two or more cores, else 0 (everything in this thread). Ignored when `parse` is given.
   * The workers use the default formats: with a custom `registry`, set `parse` to your own
   * `createWorkerParser({ registryModule })`, or this to 0.
   */
  parseWorkers?: number;
};

/** Walk options: as for the tree, plus how many pages may wait for a slow consumer. */
export type WalkPagesOptions = SitemapTreeOptions & Pick<WalkPagesWithClientOptions, 'bufferPages'>;

interface Prepared {
  options: TreeOptions;
  close(): Promise<void>;
  /** Lets the walk's own workers and client keep the process alive (the default). */
  ref(): void;
  /** None of the walk's own workers, sockets or timers keeps the process alive. */
  unref(): void;
}

/**
 * The default client's options for a walk of `target` (a homepage, or the homepage and the
 * sitemap URLs of a walk given them). An origin of these on a private address (a dev server on
 * localhost, an intranet host) is what the caller asked for, so exactly that scheme, host and
 * port is let through; every other private address a sitemap points at, another port of the same
 * host included, stays blocked. Explicit settings win.
 */
export async function clientOptionsFor(
  target: string | readonly string[],
  options: WebClientOptions = {},
): Promise<WebClientOptions> {
  if (
    options.allowPrivateNetworks === true ||
    options.allowPrivateHosts !== undefined ||
    options.allowPrivateOrigins !== undefined
  ) {
    return options;
  }
  const origins = new Set<string>();
  for (const url of typeof target === 'string' ? [target] : target) {
    // The origin, not the host: another port of a private host is another service.
    if (await hostIsPrivate(url)) origins.add(new URL(url).origin);
  }
  return origins.size === 0 ? options : { ...options, allowPrivateOrigins: [...origins] };
}

const WORKER_URL = new URL('../worker/worker.js', import.meta.url);

/**
 * The default parser of a walk: documents in this thread, and a second large document in flight
 * on a worker. Workers start only when two large documents overlap, so a small site never pays
 * for one.
 */
function defaultParser(options: SitemapTreeOptions, recordsOnly: boolean): WorkerParser | null {
  if (options.parse !== undefined) return null;
  // The workers cannot receive a registry object; plugin modules they can load themselves.
  const custom = options.registry !== undefined;
  const workers = options.parseWorkers ?? (custom ? 0 : availableParallelism() >= 2 ? 1 : 0);
  if (!Number.isInteger(workers) || workers < 0) {
    throw new InvalidOptionError('parseWorkers', 'must be an integer >= 0');
  }
  // Bundled or run from source, the worker script may not be beside this file: parse in-thread.
  if (workers === 0 || !existsSync(fileURLToPath(WORKER_URL))) return null;
  // A small young generation: the worker's garbage is short-lived pages and chunks, so it costs
  // little collection time and saves about 15 MiB of RSS against V8's default. 12 MB (semi-spaces
  // of 4 MiB) was tried: no clear CPU gain on a quiet machine, and the 2.6M-URL site's peak RSS
  // went from 127 to 150-154 MiB (the 1M site's stayed at 120-126): spent body chunks promoted in
  // the worker waited for V8's own full collection. `usp ls` gives its worker 4 MiB semi-spaces
  // with collections of spent Buffers (`tuneParseWorkers`): half the scavenges, RSS lower.
  return (recordsOnly ? createStoringWorkerParser : createWorkerParser)({
    workers,
    callerThreadDocuments: 1,
    workerUrl: WORKER_URL,
    resourceLimits: { maxYoungGenerationSizeMb: 4 },
    ...(options.pluginModules !== undefined ? { pluginModules: options.pluginModules } : {}),
  });
}

/**
 * Refuses a network option given beside the walk's (`timeout`, `userAgent`, `headers`, ...) with
 * where it goes: `webClientOptions.requestTimeoutMs`. Core checks the other keys. `headers` is
 * core's walk option too, and refused here all the same: with usp it would be a second place for
 * what `webClientOptions.headers` already does (core's own callers keep it, with their client).
 */
function rejectMisplacedNetworkOptions(options: SitemapTreeOptions): void {
  if (options === null || typeof options !== 'object') return;
  for (const key of Object.keys(options)) {
    if (Object.hasOwn(USP_OPTIONS, key)) continue;
    const where = webClientOptionName(key);
    if (where !== null) {
      throw new InvalidOptionError(
        key,
        `unknown option: network options go in webClientOptions (did you mean webClientOptions.${where}?)`,
      );
    }
  }
}

/** The options usp reads itself; the rest go to core, which checks them. */
const USP_OPTIONS = {
  webClient: true,
  webClientOptions: true,
  registry: true,
  pluginModules: true,
  parseWorkers: true,
} satisfies Record<Exclude<keyof SitemapTreeOptions, keyof TreeOptions>, true> &
  Partial<Record<keyof SitemapTreeOptions, true>>;

async function prepare(target: string, options: SitemapTreeOptions, withStore: boolean): Promise<Prepared> {
  rejectMisplacedNetworkOptions(options);
  const { webClient, webClientOptions, registry, pluginModules, parseWorkers: _workers, ...rest } = options;
  const withPlugins =
    registry === undefined && pluginModules !== undefined && pluginModules.length > 0
      ? registryWithPlugins(await importPlugins(pluginModules))
      : undefined;
  // A tree in this package's temp-file store takes a worker's pages as their records alone.
  const pool = defaultParser(options, withStore && rest.pageStore === undefined);
  const owned =
    webClient === undefined
      ? createWebClient(await clientOptionsFor([target, ...(rest.sitemaps ?? [])], webClientOptions))
      : null;
  const full: TreeOptions = {
    ...rest,
    webClient: owned ?? (webClient as WebClient),
    registry: registry ?? withPlugins ?? createDefaultRegistry(),
    pageStore: rest.pageStore ?? (withStore ? filePageStore() : undefined),
    // node:zlib with 64 KiB output chunks: about three times the speed of DecompressionStream.
    gunzip: rest.gunzip ?? nodeGunzip,
    ...(pool !== null ? { parse: pool.parse } : {}),
  };
  return {
    options: full,
    close: async () => {
      await pool?.close();
      if (owned !== null) await owned.close();
    },
    // A client the caller passed is theirs to ref or not.
    ref: () => {
      pool?.ref();
      owned?.ref();
    },
    unref: () => {
      pool?.unref();
      owned?.unref();
    },
  };
}

/**
 * Finds every sitemap of a website (robots.txt, the known paths, their children) and returns the
 * tree, as usp's `sitemap_tree_for_homepage`.
 */
export async function sitemapTreeForHomepage(
  homepageUrl: string,
  options: SitemapTreeOptions = {},
): Promise<IndexWebsiteSitemap> {
  const p = await prepare(homepageUrl, options, true);
  try {
    return await sitemapTreeForHomepageWithClient(homepageUrl, p.options);
  } finally {
    await p.close();
  }
}

/** One sitemap URL and everything below it (no robots.txt, no known paths). */
export async function sitemapTreeForUrl(
  sitemapUrl: string,
  options: SitemapTreeOptions = {},
): Promise<Sitemap> {
  const p = await prepare(sitemapUrl, options, true);
  try {
    return await sitemapTreeForUrlWithClient(sitemapUrl, p.options);
  } finally {
    await p.close();
  }
}

const NOT_STARTED: WalkStats = {
  sitemapsQueued: 0,
  sitemapsInFlight: 0,
  sitemapsFetched: 0,
  sitemapsDone: 0,
  sitemapsInvalid: 0,
  pages: 0,
  bytes: 0,
  stoppedBy: null,
};

/**
 * Walks dropped unfinished (no `break`, no `return()`) and collected: their workers and client are
 * closed, so a long-lived process does not keep a worker thread and open connections per walk
 * it gave up on. Only what the walk created is closed.
 */
const abandoned = new FinalizationRegistry<Prepared>((p) => {
  p.close().catch(() => {});
});

/**
 * Core's page walk with the Node defaults, opened on the first `next()` and closed at the end.
 * Its workers and its own client keep the process alive only while a `next()` or `return()` is
 * awaited: between two calls (the consumer busy with a page, or gone for good) the walk goes on
 * prefetching while the process lives, and an abandoned walk never keeps it from exiting.
 */
class NodePageWalk implements PageWalk {
  readonly #start: (options: WalkPagesWithClientOptions) => PageWalk;
  readonly #target: string;
  readonly #options: WalkPagesOptions;
  #walk: PageWalk | null = null;
  #opening: Promise<PageWalk> | null = null;
  #prepared: Prepared | null = null;
  #close: (() => Promise<void>) | null = null;
  /** `next()` and `return()` calls not settled yet. */
  #waiting = 0;
  /** Whether the pool and client are ref'd: they are created so. */
  #refd = true;
  #unrefScheduled = false;

  constructor(
    target: string,
    options: WalkPagesOptions,
    start: (options: WalkPagesWithClientOptions) => PageWalk,
  ) {
    this.#target = target;
    this.#options = options;
    this.#start = start;
  }

  get stats(): WalkStats {
    return this.#walk?.stats ?? NOT_STARTED;
  }

  get tree(): Sitemap | null {
    return this.#walk?.tree ?? null;
  }

  get summary(): WalkSummary | null {
    return this.#walk?.summary ?? null;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  #hold(): void {
    this.#waiting++;
    if (!this.#refd) {
      this.#refd = true;
      this.#prepared?.ref();
    }
  }

  // Let go one turn of the event loop later, and only if no call came meanwhile: a consumer
  // takes the next page within the same turn, and flipping the workers' and sockets' handles
  // for every page cost about 0.75 µs a page (0.75 s on a million pages).
  #release(): void {
    if (--this.#waiting > 0 || this.#unrefScheduled) return;
    this.#unrefScheduled = true;
    setImmediate(() => {
      this.#unrefScheduled = false;
      if (this.#waiting > 0 || !this.#refd) return;
      this.#refd = false;
      this.#prepared?.unref();
    });
  }

  async #finish(): Promise<void> {
    const close = this.#close;
    this.#close = null;
    abandoned.unregister(this);
    await close?.();
  }

  #open(): Promise<PageWalk> {
    this.#opening ??= (async () => {
      const { bufferPages, ...rest } = this.#options;
      const p = await prepare(this.#target, rest, false);
      this.#prepared = p;
      // Created ref'd, which is right: every caller of #open holds the walk until it is open.
      this.#close = p.close;
      abandoned.register(this, p, this);
      this.#walk = this.#start({ ...p.options, bufferPages });
      return this.#walk;
    })();
    return this.#opening;
  }

  async next(): Promise<IteratorResult<WalkedPage>> {
    this.#hold();
    try {
      const walk = this.#walk ?? (await this.#open());
      try {
        const r = await walk.next();
        if (r.done === true) await this.#finish();
        return r;
      } catch (err) {
        await this.#finish();
        throw err;
      }
    } finally {
      this.#release();
    }
  }

  async return(): Promise<IteratorResult<WalkedPage>> {
    this.#hold();
    try {
      // A walk still opening is closed once open, not left running behind the caller's back.
      if (this.#walk === null && this.#opening !== null) await this.#opening.catch(() => null);
      await this.#walk?.return?.();
    } finally {
      await this.#finish();
      this.#release();
    }
    return { done: true, value: undefined };
  }
}

/**
 * Streams the pages of a website as they are parsed, with the sitemap each came from; nothing
 * is kept. Stop early with `break`: the walk is cancelled and its client closed. `stats` and,
 * once iteration is over, `tree` (the shape, pages counted) are on the returned walk.
 */
export function walkPages(homepageUrl: string, options: WalkPagesOptions = {}): PageWalk {
  rejectMisplacedNetworkOptions(options);
  return new NodePageWalk(homepageUrl, options, (o) => walkPagesWithClient(homepageUrl, o));
}

/** Streams the pages of one sitemap URL and its children. */
export function walkSitemapPages(sitemapUrl: string, options: WalkPagesOptions = {}): PageWalk {
  rejectMisplacedNetworkOptions(options);
  return new NodePageWalk(sitemapUrl, options, (o) => walkSitemapPagesWithClient(sitemapUrl, o));
}
