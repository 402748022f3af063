import type { PageStore } from '../contract/page-store.js';
import type { ParsedDocument } from '../contract/parsed-document.js';
import type { HeaderLookup } from '../contract/plugin.js';
import type { Registry, RegistryLoader } from '../contract/registry.js';
import type { SitemapDate } from '../contract/sitemap-date.js';
import type { WarningListener } from '../contract/warning.js';
import type { WebClient } from '../contract/web-client.js';
import type { DocumentLimits, ParseDocumentOptions } from '../engine/document-options.js';
import type { Gunzip } from '../engine/gunzip.js';
import type { BodyHasher, DocumentToParse } from './document-response.js';
import type { OriginBreaker, OriginBreakerOptions } from './origin-breaker.js';
import type { Revisit, WalkedDocument } from './revisit.js';
import type { SkippedSitemap } from './skipped.js';
import type { TreeNodeListener } from './tree-order.js';
import type { WalkStats } from './walk-stats.js';

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
  /**
   * The formats documents are parsed with, or a function giving them on first use (a
   * `RegistryLoader`: a walk that parses nothing never calls it). Required.
   */
  readonly registry: Registry | RegistryLoader;
  /** Fetch `<homepage>robots.txt` first (default true). */
  readonly useRobots?: boolean;
  /**
   * Probe `KNOWN_SITEMAP_PATHS` (default true, as usp). `'fallback'` probes them only when
   * robots.txt names no sitemap: it could not be fetched, was not read as robots.txt, or lists no
   * `Sitemap:` line (whether or not the walk went on to the sitemaps it names). `usp validate`
   * looks for `sitemap.xml` this way.
   */
  readonly useKnownPaths?: boolean | 'fallback';
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
  /**
   * Sees each document once its node is built (fetched, replayed or failed), before its children,
   * with the answer to its request (`response`: status, validators, bytes, ms, body hash) and what
   * the page store kept of its pages (`stored`).
   */
  readonly onDocument?: (document: WalkedDocument) => void;
  /**
   * Sees each sitemap the walk was asked for and did not request, with why (see `SkippedSitemap`):
   * a repeat, a child refused by usp's rules (too deep, a cycle, not http(s), off the site), or
   * one left when the walk stopped (a budget, an abort). Not the children a `recurseCallback` or
   * `recurseListCallback` turned down, and not a redirect onto a sitemap the walk has (that one
   * was requested: `onDocument` sees it).
   */
  readonly onSkipped?: (sitemap: SkippedSitemap) => void;
  /**
   * Called once a document's body is about to be parsed (after redirects were followed and
   * accepted, before the page store is opened for it), and awaited: where a caller loads what it
   * needs for that document. The document holds its slot meanwhile. A rejection loses the
   * document: its body is dropped and it becomes an `InvalidSitemap` saying why.
   */
  readonly beforeParse?: (document: DocumentToParse) => void | Promise<void>;
  /**
   * Hashes each body as it is read, for `WalkedDocument.response.bodyHash` (a new hasher a
   * document). Default: none (`bodyHash` is `null`).
   */
  readonly hashBody?: () => BodyHasher;
  /**
   * Sees the nodes of the tree the walk returns in that tree's depth-first order (the order of
   * `allSitemaps()`), each with its depth, as soon as it is built and every node before it was
   * seen: a printer can write the tree while the walk goes on. A pages sitemap comes with its
   * pages stored; an index before its children are fetched (its `subSitemaps` fill later). The root
   * of a homepage walk is built last and not reported; top-level probes the tree drops are not
   * reported either. A returned promise is awaited before the next node (the walk goes on
   * meanwhile); the tree is returned once every node was reported. A hook that throws ends the
   * reports, not the walk.
   */
  readonly onTreeNode?: TreeNodeListener;
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

export interface WalkPagesWithClientOptions extends TreeOptions {
  /** Pages buffered ahead of the consumer before fetching pauses (default 2,000). */
  readonly bufferPages?: number;
}
