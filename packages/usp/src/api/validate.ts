import {
  type ChildRef,
  type DocumentPosition,
  type HeaderLookup,
  headerLookup,
  InvalidUrlError,
  isHttpUrl,
  MAX_SITEMAP_BYTES,
  MAX_URLS_PER_SITEMAP,
  type Page,
  type ParsedDocument,
  type ParseObserver,
  parseDocument,
  type Registry,
  type SitemapType,
  type Warning,
  type WebClient,
} from '@usp-ts/core';
import { urlKey } from '@usp-ts/core/engine';
import { createWebClient, type WebClientOptions } from '@usp-ts/fetcher';
import { SITEMAP_NAMESPACE } from '@usp-ts/format-xml-sitemap';
import { nodeGunzip } from '../node/gunzip.js';
import { createDefaultRegistry } from '../plugins/defaults.js';
import { LOCAL_DUMMY_URL } from './document.js';
import { clientOptionsFor } from './tree.js';

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

const WARNING_CODES = new Set([
  'duplicate-url',
  'unknown-element',
  'encoding',
  'limit',
  'soft-404',
  'outside-directory',
  'content-type',
  'empty',
  'recursion',
  'blocked',
  'redirect',
  'no-sitemap',
]);

function severityOf(code: string): FindingSeverity {
  return WARNING_CODES.has(code) ? 'warning' : 'error';
}

type Location = { entry?: number; line?: number };

/** The characters of a document's start in which an HTML page is recognised. */
const HEAD_CHARS = 4096;

/**
 * What one document's checks need to know, and what they found. It watches the parse
 * (`ParseObserver`): the formats report where each page, child and warning is.
 */
class DocumentCheck implements ParseObserver {
  readonly findings: Finding[] = [];
  /** Warnings the parsers raised, already recorded with a location. */
  readonly #seen = new Map<string, number>();
  readonly #pageUrls = new Set<string>();
  /** Children, checked once the document's type is known (robots.txt may name any host). */
  readonly #children: { url: string; location: Location }[] = [];
  pages = 0;
  children = 0;
  /** The highest entry the format reported reading. */
  entries = 0;
  /** The start of the decoded text (to spot HTML). */
  head = '';

  constructor(
    readonly url: string,
    /** Origins (`scheme://host:port`) a `<loc>` may use; `null` skips the host checks. */
    readonly origins: ReadonlySet<string> | null,
  ) {}

  add(code: string, message: string, location: Location = {}, severity = severityOf(code)): void {
    this.findings.push({ severity, code, message, sitemap: this.url, ...location });
  }

  has(code: string): boolean {
    return this.findings.some((f) => f.code === code);
  }

  // ParseObserver

  at(position: DocumentPosition | null): void {
    if (position !== null && 'entry' in position && position.entry > this.entries) {
      this.entries = position.entry;
    }
  }

  text(text: string): void {
    if (this.head.length < HEAD_CHARS) this.head += text.slice(0, HEAD_CHARS - this.head.length);
  }

  /** A warning raised inside a parser: recorded here with the position being read. */
  warn(code: string, message: string, at: DocumentPosition | null): void {
    const key = `${code}\u0000${message}`;
    this.#seen.set(key, (this.#seen.get(key) ?? 0) + 1);
    this.add(code, message, at ?? {});
  }

  page(page: Page, at: DocumentPosition | null): void {
    this.pages++;
    const loc = at ?? {};
    if (this.#pageUrls.has(page.url)) {
      this.add('duplicate-url', `URL ${page.url} is listed more than once`, loc);
    } else {
      this.#pageUrls.add(page.url);
    }
    this.checkLoc(page.url, loc, 'URL');
  }

  child(ref: ChildRef, at: DocumentPosition | null): void {
    this.children++;
    this.#children.push({ url: ref.url, location: at ?? {} });
  }

  /** A warning from the document driver: recorded unless the parser already had it. */
  driverWarning(w: Warning): void {
    // The driver's own size and count warnings: reported as too-large / too-many-urls instead.
    if (w.code === 'over-spec') return;
    const key = `${w.code}\u0000${w.message}`;
    const n = this.#seen.get(key) ?? 0;
    if (n > 0) {
      this.#seen.set(key, n - 1);
      return;
    }
    this.add(w.code, w.message);
  }

  /** The children's hosts, once the type is known: robots.txt may name sitemaps on any host (cross-submission); an index may not. */
  checkChildren(type: SitemapType): void {
    if (type === 'IndexRobotsTxtSitemap') return;
    for (const c of this.#children) this.checkLoc(c.url, c.location, 'Sitemap');
  }

  checkLoc(url: string, loc: Location, what: string): void {
    if (!isHttpUrl(url)) {
      const relative = !/^[a-z][a-z0-9+.-]*:/i.test(url);
      this.add(
        relative ? 'relative-url' : 'invalid-url',
        relative
          ? `${what} ${JSON.stringify(url)} is relative: the protocol requires absolute URLs`
          : `${what} ${JSON.stringify(url)} is not an http(s) URL`,
        loc,
      );
      return;
    }
    if (this.origins === null) return;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      this.add('invalid-url', `${what} ${JSON.stringify(url)} is not a valid URL`, loc);
      return;
    }
    const self = new URL(this.url);
    if (!this.origins.has(parsed.origin)) {
      this.add(
        'cross-host',
        `${what} ${url} is not on ${self.origin}: a sitemap may list URLs of its own host and scheme only, unless the other host's robots.txt names the sitemap`,
        loc,
      );
      return;
    }
    if (parsed.origin === self.origin) {
      const dir = self.pathname.slice(0, self.pathname.lastIndexOf('/') + 1);
      if (!parsed.pathname.startsWith(dir)) {
        this.add(
          'outside-directory',
          `${what} ${url} is outside ${dir}, the directory of the sitemap: search engines ignore it`,
          loc,
        );
      }
    }
  }
}

const HTML_START =
  /^\s*(?:<\?xml[^>]*>\s*)?(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html[\s>]|head[\s>]|body[\s>])/i;

function mediaType(contentType: string | null): string | null {
  if (contentType === null) return null;
  return contentType.split(';')[0].trim().toLowerCase();
}

const GZIP_TYPES = new Set(['application/x-gzip', 'application/gzip', 'application/octet-stream']);

function contentTypeFinding(
  check: DocumentCheck,
  type: SitemapType,
  contentType: string | null,
  gz: boolean,
): void {
  const media = mediaType(contentType);
  if (media === null) {
    check.add('content-type', 'The response has no Content-Type header');
    return;
  }
  if (media === 'text/html' || media === 'application/xhtml+xml') {
    check.add('content-type', `Served as ${media}: a sitemap is XML or plain text`, {}, 'error');
    return;
  }
  if (gz && GZIP_TYPES.has(media)) return;
  const xmlish = media === 'text/xml' || media === 'application/xml' || media.endsWith('+xml');
  let fine: boolean;
  switch (type) {
    case 'PagesXMLSitemap':
    case 'IndexXMLSitemap':
    case 'PagesRSSSitemap':
    case 'PagesAtomSitemap':
      fine = xmlish;
      break;
    case 'PagesTextSitemap':
    case 'IndexRobotsTxtSitemap':
      fine = media === 'text/plain';
      break;
    default:
      return;
  }
  if (!fine) {
    const want =
      type === 'PagesTextSitemap' || type === 'IndexRobotsTxtSitemap'
        ? 'text/plain'
        : 'application/xml or text/xml';
    check.add('content-type', `Served as ${media}; expected ${want}`);
  }
}

interface DocumentInput {
  url: string;
  body: AsyncIterable<Uint8Array>;
  headers: HeaderLookup;
  contentTypeCheck: boolean;
  origins: ReadonlySet<string> | null;
}

interface DocumentResult {
  check: DocumentCheck;
  parsed: ParsedDocument;
  summary: ValidatedSitemap;
}

async function checkDocument(
  input: DocumentInput,
  registry: Registry,
  signal?: AbortSignal,
): Promise<DocumentResult> {
  const check = new DocumentCheck(input.url, input.origins);
  const parsed = await parseDocument({
    url: input.url,
    body: input.body,
    headers: input.headers,
    registry,
    observer: check,
    onWarning: (w) => check.driverWarning(w),
    gunzip: nodeGunzip,
    // Count past the protocol's limits instead of stopping at them.
    limits: { maxPagesPerDocument: 5_000_000, maxChildrenPerIndex: 5_000_000 },
    signal,
  });
  // The description is all a check needs: no node, no pages kept.
  const node = parsed;
  check.checkChildren(node.type);
  const html = HTML_START.test(check.head.replace(/^\uFEFF/, ''));
  if (html && (node.type === 'InvalidSitemap' || (check.pages === 0 && check.children === 0))) {
    // Whatever the parsers said about it (DOCTYPE refused, unknown root, no URLs), it is one problem.
    check.findings.length = 0;
    check.add('html', 'An HTML page was served instead of a sitemap');
  } else if (node.type === 'InvalidSitemap') {
    check.add('invalid-sitemap', node.reason ?? '');
  }
  const root = parsed.root ?? null;
  if (
    node.type !== 'InvalidSitemap' &&
    root !== null &&
    (root.local === 'urlset' || root.local === 'sitemapindex') &&
    root.ns !== SITEMAP_NAMESPACE
  ) {
    if (root.ns === '') {
      if (!check.has('missing-namespace')) {
        check.add(
          'missing-namespace',
          `<${root.local}> has no namespace; the protocol requires ${SITEMAP_NAMESPACE}`,
        );
      }
    } else {
      check.add(
        'wrong-namespace',
        `<${root.local}> is in namespace ${root.ns}; the protocol requires ${SITEMAP_NAMESPACE}`,
      );
    }
  }
  if (parsed.bytes > MAX_SITEMAP_BYTES) {
    check.add(
      'too-large',
      `${parsed.bytes} bytes uncompressed: the limit is 50 MB (${MAX_SITEMAP_BYTES} bytes); split the sitemap`,
    );
  }
  if (check.pages > MAX_URLS_PER_SITEMAP) {
    check.add(
      'too-many-urls',
      `${check.pages} URLs: the limit is ${MAX_URLS_PER_SITEMAP} per sitemap; split it`,
    );
  }
  if (check.children > MAX_URLS_PER_SITEMAP && node.type !== 'IndexRobotsTxtSitemap') {
    check.add(
      'too-many-sitemaps',
      `${check.children} sitemaps: the limit is ${MAX_URLS_PER_SITEMAP} per sitemap index; split it`,
    );
  }
  if (parsed.truncated && !check.findings.some((f) => f.severity === 'error')) {
    check.add('truncated', 'The document ended early: entries after the cut are lost');
  }
  const isPages = node.type.startsWith('Pages');
  if (isPages && check.pages === 0 && !check.has('html')) check.add('empty', 'The sitemap lists no URLs');
  const contentType = input.headers('content-type');
  if (input.contentTypeCheck && !check.has('html'))
    contentTypeFinding(check, node.type, contentType, (parsed.gzipLayers ?? 0) > 0);
  return {
    check,
    parsed,
    summary: {
      url: node.url,
      type: node.type,
      // A format that reports its entries counts every one, not only those that became pages.
      entries:
        node.type === 'InvalidSitemap'
          ? check.children
          : Math.max(check.entries, isPages ? check.pages : check.children),
      bytes: parsed.bytes,
      contentType,
    },
  };
}

function report(
  results: { summary: ValidatedSitemap; findings: Finding[] }[],
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
    sitemaps: results.map((r) => r.summary),
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
  const r = await checkDocument(
    {
      url,
      body: stream,
      headers,
      contentTypeCheck: options.headers !== undefined,
      origins: options.url === undefined ? null : new Set([new URL(url).origin]),
    },
    registry,
  );
  return report([{ summary: r.summary, findings: r.check.findings }], 0);
}

interface Job {
  url: string;
  depth: number;
  /** Origins a `<loc>` may use besides the sitemap's own (the robots.txt host that named it). */
  extraOrigins: readonly string[];
}

/**
 * Fetches a sitemap (or a homepage: its robots.txt and the sitemaps it names) and checks it and,
 * by default, every sitemap below it. Bad content never throws: it becomes a finding.
 */
export async function validateSitemap(url: string, options: ValidateOptions = {}): Promise<ValidationReport> {
  if (!isHttpUrl(url)) throw new InvalidUrlError(url);
  const owned =
    options.webClient === undefined
      ? createWebClient(await clientOptionsFor(url, options.webClientOptions))
      : null;
  const client = owned ?? (options.webClient as WebClient);
  const registry = options.registry ?? createDefaultRegistry();
  const follow = options.followChildren ?? true;
  const maxSitemaps = options.maxSitemaps ?? 1000;
  const maxDepth = options.maxDepth ?? 11;
  const concurrency = Math.max(1, options.concurrency ?? 4);

  const start = new URL(url);
  const homepage = start.pathname === '/' && start.search === '';
  const first = homepage ? new URL('/robots.txt', start).href : url;

  const results: { order: number; summary: ValidatedSitemap; findings: Finding[] }[] = [];
  const seen = new Set<string>([urlKey(first)]);
  const queue: (Job & { order: number })[] = [{ url: first, depth: 0, extraOrigins: [], order: 0 }];
  let order = 1;
  let started = 0;
  let reached = false;

  const runJob = async (job: Job & { order: number }): Promise<void> => {
    const check = new DocumentCheck(job.url, null);
    const response = await client.get(job.url, { signal: options.signal });
    if (response.kind !== 'error' || response.status !== null) reached = true;
    if (response.kind !== 'ok') {
      if (response.kind === 'error') {
        if (homepage && job.order === 0) {
          // robots.txt is optional; /sitemap.xml is tried next.
          check.add(
            'no-sitemap',
            `robots.txt could not be fetched (${response.message}), so it names no sitemap`,
          );
        } else {
          check.add('fetch', `Could not fetch the sitemap: ${response.message}`);
        }
      }
      const summary: ValidatedSitemap = {
        url: job.url,
        type: 'InvalidSitemap',
        entries: 0,
        bytes: 0,
        contentType: null,
      };
      results.push({ order: job.order, summary, findings: check.findings });
      options.onSitemap?.(summary, check.findings);
      if (homepage && job.order === 0) enqueue(new URL('/sitemap.xml', start).href, 1, []);
      return;
    }
    const finalUrl = response.url;
    const origins = new Set([new URL(finalUrl).origin, ...job.extraOrigins]);
    let result: DocumentResult;
    try {
      result = await checkDocument(
        { url: finalUrl, body: response.body, headers: response.headers, contentTypeCheck: true, origins },
        registry,
        options.signal,
      );
    } finally {
      response.cancel();
    }
    const findings = result.check.findings;
    if (finalUrl !== job.url) {
      findings.unshift({
        severity: 'warning',
        code: 'redirect',
        message: `${job.url} redirects to ${finalUrl}: list the final URL`,
        sitemap: finalUrl,
      });
    }
    results.push({ order: job.order, summary: result.summary, findings });
    options.onSitemap?.(result.summary, findings);
    const robots = result.summary.type === 'IndexRobotsTxtSitemap';
    if (homepage && job.order === 0 && robots && result.parsed.children.length === 0) {
      findings.push({
        severity: 'warning',
        code: 'no-sitemap',
        message: 'robots.txt names no sitemap (add a "Sitemap: <absolute URL>" line)',
        sitemap: finalUrl,
      });
      enqueue(new URL('/sitemap.xml', start).href, 1, []);
    }
    if (!follow) return;
    for (const child of result.parsed.children) {
      if (job.depth + 1 > maxDepth) {
        findings.push({
          severity: 'error',
          code: 'recursion',
          message: `Sitemap ${child.url} is nested deeper than ${maxDepth} levels`,
          sitemap: finalUrl,
        });
        continue;
      }
      // A sitemap named by robots.txt may list URLs of the robots.txt host (cross-submission).
      enqueue(child.url, job.depth + 1, robots ? [new URL(finalUrl).origin] : job.extraOrigins);
    }
  };

  const enqueue = (u: string, depth: number, extraOrigins: readonly string[]): void => {
    const key = urlKey(u);
    if (seen.has(key)) return;
    seen.add(key);
    queue.push({ url: u, depth, extraOrigins, order: order++ });
  };

  try {
    const workers: Promise<void>[] = [];
    const worker = async (): Promise<void> => {
      for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
        if (started >= maxSitemaps) {
          queue.unshift(job);
          return;
        }
        started++;
        await runJob(job);
      }
    };
    // Workers end when the queue is empty; a job may refill it, so loop until nothing is left.
    while (queue.length > 0 && started < maxSitemaps) {
      workers.length = 0;
      for (let i = 0; i < concurrency; i++) workers.push(worker());
      await Promise.all(workers);
    }
  } finally {
    if (owned !== null) await owned.close();
  }
  results.sort((a, b) => a.order - b.order);
  return report(results, queue.length, reached);
}
