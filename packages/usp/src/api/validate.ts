import {
  DEFAULT_MAX_DEPTH,
  type HeaderLookup,
  headerLookup,
  InvalidUrlError,
  isHttpUrl,
  type Registry,
  type SitemapType,
  sitemapTreeForHomepageWithClient,
  sitemapTreeForUrlWithClient,
  type TreeOptions,
  type WebClient,
} from '@usp-ts/core';
import { createWebClient, type WebClientOptions } from '@usp-ts/fetcher';
import { nodeGunzip } from '../node/gunzip.js';
import { createDefaultRegistry } from '../plugins/defaults.js';
import { LOCAL_DUMMY_URL } from './document.js';
import { clientOptionsFor } from './tree.js';
import { CHECK_LIMITS, checkDocument, DocumentCheck } from './validate-checks.js';
import { ValidationWalk } from './validate-walk.js';

export type FindingSeverity = 'error' | 'warning';

/** One way a sitemap breaks the sitemaps.org protocol or Google's rules. */
export interface Finding {
  readonly severity: FindingSeverity;
  /** Stable: the parser's warning code, or one of validate's own (`cross-host`, `content-type`, ...). */
  readonly code: string;
  readonly message: string;
  /** The sitemap document concerned. */
  readonly sitemap: string;
  /** 1-based index of the entry (`<url>`, `<sitemap>`, `<item>`, `<entry>`) in an XML document. */
  readonly entry?: number;
  /** 1-based line in a text document (robots.txt, plain-text sitemap). */
  readonly line?: number;
}

export interface ValidatedSitemap {
  readonly url: string;
  readonly type: SitemapType;
  /**
   * Entries read: every entry element of an XML document (`<url>`, `<sitemap>`, `<item>`,
   * `<entry>`), valid or not, duplicates included; for a text document (and a format that does
   * not report its entries), the pages or child sitemaps it lists.
   */
  readonly entries: number;
  /** Decoded bytes (after gunzip). */
  readonly bytes: number;
  readonly contentType: string | null;
}

export interface ValidationReport {
  /** `true` when there are no findings at all. */
  readonly ok: boolean;
  readonly errors: number;
  readonly warnings: number;
  /** Grouped by sitemap in the order the sitemaps were reached, then by position. */
  readonly findings: Finding[];
  readonly sitemaps: ValidatedSitemap[];
  /** Sitemaps found but not checked because `maxSitemaps` was reached. */
  readonly unchecked: number;
  /**
   * `false` when no request got an HTTP response (refused, timeout, DNS, TLS, blocked address):
   * nothing could be checked, which is not the same as a sitemap with findings. Always `true`
   * for `validateDocument`.
   */
  readonly reached: boolean;
}

export interface ValidateOptions {
  /** Your own client; it is left open. Default: `createWebClient(webClientOptions)`. */
  webClient?: WebClient;
  webClientOptions?: WebClientOptions;
  /** Formats to detect (default: every format of this package). */
  registry?: Registry;
  /** Follow the children of indexes (default true). */
  followChildren?: boolean;
  /** Stop after this many documents (default 1,000). */
  maxSitemaps?: number;
  /** Index nesting followed, robots.txt being 0 (default 11, as usp). */
  maxDepth?: number;
  /** Documents fetched at once (default 4). */
  concurrency?: number;
  /** Called as each document is done (for progress). */
  onSitemap?: (sitemap: ValidatedSitemap, findings: readonly Finding[]) => void;
  signal?: AbortSignal;
}

export interface ValidateDocumentOptions {
  /**
   * Where the document lives. Given, it enables the host and directory checks of each `<loc>`;
   * absent, usp's dummy URL stands in and those checks are skipped.
   */
  url?: string;
  headers?: HeaderLookup | Readonly<Record<string, string>>;
  registry?: Registry;
}
function report(
  results: { summary: ValidatedSitemap | null; findings: Finding[] }[],
  unchecked: number,
  reached = true,
): ValidationReport {
  const findings = results.flatMap((r) =>
    r.findings
      .map((f, i) => ({ f, i }))
      .sort((a, b) => (a.f.entry ?? a.f.line ?? 0) - (b.f.entry ?? b.f.line ?? 0) || a.i - b.i)
      .map(({ f }) => f),
  );
  const errors = findings.filter((f) => f.severity === 'error').length;
  return {
    ok: findings.length === 0,
    errors,
    warnings: findings.length - errors,
    findings,
    sitemaps: results.flatMap((r) => (r.summary === null ? [] : [r.summary])),
    unchecked,
    reached,
  };
}

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

/**
 * Checks one document in hand (no network): the protocol's limits, namespace, every `<loc>`,
 * date, priority and change frequency. Children of an index are counted, not fetched.
 */
export async function validateDocument(
  body: Uint8Array | string | AsyncIterable<Uint8Array>,
  options: ValidateDocumentOptions = {},
): Promise<ValidationReport> {
  const stream =
    typeof body === 'string'
      ? once(new TextEncoder().encode(body))
      : body instanceof Uint8Array
        ? once(body)
        : body;
  const url = options.url ?? LOCAL_DUMMY_URL;
  if (!isHttpUrl(url)) throw new InvalidUrlError(url);
  const registry = options.registry ?? createDefaultRegistry();
  const headers = typeof options.headers === 'function' ? options.headers : headerLookup(options.headers);
  const origins = options.url === undefined ? null : new Set([new URL(url).origin]);
  const r = await checkDocument(
    { url, body: stream, headers, registry },
    new DocumentCheck(url, origins),
    options.headers !== undefined,
  );
  return report([{ summary: r.summary, findings: r.check.findings }], 0);
}

/**
 * Fetches a sitemap (or a homepage: its robots.txt and the sitemaps it names, `sitemap.xml` when
 * it names none) and checks it and, by default, every sitemap below it. The documents are found
 * by core's walk, with its rules: each fetched once, `maxDepth`, `maxSitemaps`, `concurrency`.
 * Bad content never throws: it becomes a finding.
 */
export async function validateSitemap(url: string, options: ValidateOptions = {}): Promise<ValidationReport> {
  if (!isHttpUrl(url)) throw new InvalidUrlError(url);
  const start = new URL(url);
  const homepage = start.pathname === '/' && start.search === '';
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const validation = new ValidationWalk({ homepage, maxDepth, onSitemap: options.onSitemap });
  const owned =
    options.webClient === undefined
      ? createWebClient(await clientOptionsFor(url, options.webClientOptions))
      : null;
  const walk: TreeOptions = {
    webClient: validation.watch(owned ?? (options.webClient as WebClient)),
    registry: options.registry ?? createDefaultRegistry(),
    // robots.txt is optional: without a sitemap named there, sitemap.xml is the one place to look.
    useKnownPaths: 'fallback',
    knownPaths: ['sitemap.xml'],
    maxDepth,
    maxSitemaps: options.maxSitemaps ?? 1000,
    concurrency: Math.max(1, Math.ceil(options.concurrency ?? 4)),
    documentLimits: CHECK_LIMITS,
    // Every sitemap is checked, however its host answered the one before.
    originBreaker: false,
    dropSoft404: false,
    gunzip: nodeGunzip,
    beforeParse: validation.beforeParse,
    parse: validation.parse,
    onDocument: validation.onDocument,
    onSkipped: validation.onSkipped,
    ...(options.followChildren === false ? { recurseListCallback: () => [] } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  };
  try {
    if (homepage) await sitemapTreeForHomepageWithClient(url, walk);
    else await sitemapTreeForUrlWithClient(url, walk);
  } finally {
    if (owned !== null) await owned.close();
  }
  // An interrupted check is no report.
  options.signal?.throwIfAborted();
  return report(validation.inOrder(), validation.unchecked, validation.reached);
}
