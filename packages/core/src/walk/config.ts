import { InvalidOptionError } from '../contract/errors.js';
import type { PageStore } from '../contract/page-store.js';
import type { ParsedDocument } from '../contract/parsed-document.js';
import type { Registry, RegistryLoader } from '../contract/registry.js';
import type { WebClient } from '../contract/web-client.js';
import { parseDocument } from '../engine/document.js';
import {
  DEFAULT_DOCUMENT_LIMITS,
  type DocumentLimits,
  type ParseDocumentOptions,
} from '../engine/document-options.js';
import type { Gunzip } from '../engine/gunzip.js';
import { rejectUnknownOptions } from '../engine/options.js';
import { isHttpUrl } from '../engine/url.js';
import { KNOWN_SITEMAP_PATHS } from './known-paths.js';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_SITEMAPS,
  DEFAULT_STREAM_BUFFER_PAGES,
  type TreeOptions,
  type WalkPagesWithClientOptions,
} from './options.js';
import { OriginBreaker } from './origin-breaker.js';

/** The caller's hooks of one walk, each absent unless given. */
export type WalkHooks = Pick<
  TreeOptions,
  | 'onWarning'
  | 'onProgress'
  | 'onDocument'
  | 'onSkipped'
  | 'beforeParse'
  | 'hashBody'
  | 'onTreeNode'
  | 'onResponse'
  | 'conditionalRequest'
  | 'revisit'
  | 'recurseCallback'
  | 'recurseListCallback'
>;

/** The known-path options of a walk that probes them, defaults filled in. */
export type KnownPathConfig = Required<
  Pick<TreeOptions, 'knownPaths' | 'includeWordPressSitemap' | 'includeSitemapTxt' | 'extraKnownPaths'>
>;

/**
 * Everything one walk reads, resolved once: options checked, defaults filled in, limits merged,
 * hooks gathered. The walk never sees the caller's options object, so a default or a check
 * lives here and nowhere else.
 */
export interface WalkConfig {
  readonly webClient: WebClient;
  readonly registry: Registry | RegistryLoader;
  readonly maxDepth: number;
  readonly concurrency: number;
  readonly maxSitemaps: number;
  readonly maxPages: number;
  /** `null`: no deadline. */
  readonly deadlineMs: number | null;
  readonly signal: AbortSignal | null;
  readonly pageStore: PageStore;
  /** The site the walk is for (the sitemap URL itself for a one-sitemap walk). */
  readonly homepageUrl: string;
  readonly hostPolicy: 'any' | 'same-site';
  /** `documentLimits` with `maxChildrenPerIndex` merged in; `undefined` for the parser's defaults. */
  readonly documentLimits: Partial<DocumentLimits> | undefined;
  readonly headers: Readonly<Record<string, string>> | undefined;
  readonly parse: (options: ParseDocumentOptions) => Promise<ParsedDocument>;
  readonly gunzip: Gunzip | undefined;
  readonly hooks: WalkHooks;
  /** `null` when the caller turned it off (`originBreaker: false`). */
  readonly breaker: OriginBreaker | null;
  /** The top level of a homepage walk: exactly these sitemaps, or `null` to discover them. */
  readonly sitemaps: readonly string[] | null;
  readonly useRobots: boolean;
  /** The known paths to probe; `null` when they are not probed. */
  readonly knownPaths: KnownPathConfig | null;
  /** Probe them only when robots.txt names no sitemap (`useKnownPaths: 'fallback'`). */
  readonly knownPathsFallback: boolean;
  readonly dropSoft404: boolean;
}

// Every key of the options types, so the tables cannot fall behind them.
export const TREE_OPTIONS = {
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
  onSkipped: true,
  beforeParse: true,
  hashBody: true,
  onTreeNode: true,
  onResponse: true,
  parse: true,
  gunzip: true,
  originBreaker: true,
} satisfies Record<keyof TreeOptions, true>;
export const WALK_OPTIONS = { ...TREE_OPTIONS, bufferPages: true } satisfies Record<
  keyof WalkPagesWithClientOptions,
  true
>;

/** A whole-number option: `fallback` when absent, `Infinity` allowed. */
function int(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (value === Number.POSITIVE_INFINITY) return value;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new InvalidOptionError(name, `must be an integer >= ${min}`);
  }
  return value;
}

const HOOKS = [
  'recurseCallback',
  'recurseListCallback',
  'onWarning',
  'onProgress',
  'parse',
  'conditionalRequest',
  'onDocument',
  'onSkipped',
  'beforeParse',
  'hashBody',
  'onTreeNode',
  'onResponse',
  'gunzip',
] as const;

/**
 * Checks a walk's options (unknown keys with "did you mean", types, ranges) and resolves them
 * into the one config the walk reads. Throws `InvalidOptionError`.
 */
export function resolveWalkConfig(
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
  if (typeof options.registry !== 'function' && typeof options.registry?.xmlFormatFor !== 'function') {
    throw new InvalidOptionError(
      'registry',
      'is required (build one with createRegistry, or pass a function that returns a promise of one)',
    );
  }
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
  const useKnownPaths = options.useKnownPaths ?? true;
  if (typeof useKnownPaths !== 'boolean' && useKnownPaths !== 'fallback') {
    throw new InvalidOptionError('useKnownPaths', "must be true, false or 'fallback'");
  }
  checkPaths('knownPaths', options.knownPaths);
  checkPaths('extraKnownPaths', options.extraKnownPaths);
  if (options.sitemaps !== undefined) {
    if (!Array.isArray(options.sitemaps))
      throw new InvalidOptionError('sitemaps', 'must be an array of URLs');
    for (const url of options.sitemaps) {
      if (typeof url !== 'string' || !isHttpUrl(url)) {
        throw new InvalidOptionError('sitemaps', `${JSON.stringify(url)} is not an absolute http(s) URL`);
      }
    }
  }
  if (options.documentLimits !== undefined) checkDocumentLimits(options.documentLimits);
  for (const name of HOOKS) {
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
  const { documentLimits, maxChildrenPerIndex } = options;
  return {
    webClient: options.webClient,
    registry: options.registry,
    maxDepth: int('maxDepth', options.maxDepth, DEFAULT_MAX_DEPTH, 0),
    concurrency,
    maxSitemaps: int('maxSitemaps', options.maxSitemaps, DEFAULT_MAX_SITEMAPS, 0),
    maxPages: int('maxPages', options.maxPages, Number.POSITIVE_INFINITY, 0),
    deadlineMs: deadline === undefined || deadline === Number.POSITIVE_INFINITY ? null : deadline,
    signal: options.signal ?? null,
    pageStore,
    homepageUrl,
    hostPolicy: options.hostPolicy ?? 'any',
    documentLimits:
      documentLimits === undefined && maxChildrenPerIndex === undefined
        ? undefined
        : { ...documentLimits, ...(maxChildrenPerIndex !== undefined ? { maxChildrenPerIndex } : {}) },
    headers: options.headers,
    parse: options.parse ?? parseDocument,
    gunzip: options.gunzip,
    hooks: {
      onWarning: options.onWarning,
      onProgress: options.onProgress,
      onDocument: options.onDocument,
      onSkipped: options.onSkipped,
      beforeParse: options.beforeParse,
      hashBody: options.hashBody,
      onTreeNode: options.onTreeNode,
      onResponse: options.onResponse,
      conditionalRequest: options.conditionalRequest,
      revisit: options.revisit,
      recurseCallback: options.recurseCallback,
      recurseListCallback: options.recurseListCallback,
    },
    breaker: breakerOf(options.originBreaker),
    sitemaps: options.sitemaps ?? null,
    useRobots: options.useRobots ?? true,
    knownPaths:
      useKnownPaths !== false
        ? {
            knownPaths: options.knownPaths ?? KNOWN_SITEMAP_PATHS,
            includeWordPressSitemap: options.includeWordPressSitemap === true,
            includeSitemapTxt: options.includeSitemapTxt === true,
            extraKnownPaths: options.extraKnownPaths ?? [],
          }
        : null,
    knownPathsFallback: useKnownPaths === 'fallback',
    dropSoft404: options.dropSoft404 ?? true,
  };
}

function checkPaths(name: string, paths: readonly string[] | undefined): void {
  if (paths !== undefined && (!Array.isArray(paths) || paths.some((p) => typeof p !== 'string'))) {
    throw new InvalidOptionError(name, 'must be an array of strings');
  }
}

function checkDocumentLimits(limits: Partial<DocumentLimits>): void {
  for (const [key, value] of Object.entries(limits)) {
    if (!(key in DEFAULT_DOCUMENT_LIMITS))
      throw new InvalidOptionError(`documentLimits.${key}`, 'unknown limit');
    if (value !== undefined && (typeof value !== 'number' || Number.isNaN(value) || value < 1)) {
      throw new InvalidOptionError(`documentLimits.${key}`, 'must be a number >= 1');
    }
  }
}

function breakerOf(option: TreeOptions['originBreaker']): OriginBreaker | null {
  if (option === false) return null;
  if (option instanceof OriginBreaker) return option;
  return new OriginBreaker(option ?? {});
}

/** The page buffer of a streaming walk (`bufferPages`), checked. */
export function bufferOf(options: WalkPagesWithClientOptions): number {
  const n = options.bufferPages ?? DEFAULT_STREAM_BUFFER_PAGES;
  if (!Number.isInteger(n) || n < 1) throw new InvalidOptionError('bufferPages', 'must be an integer >= 1');
  return n;
}
