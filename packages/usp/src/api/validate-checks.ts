import {
  type ChildRef,
  type DocumentPosition,
  type HeaderLookup,
  isHttpUrl,
  MAX_SITEMAP_BYTES,
  MAX_URLS_PER_SITEMAP,
  type Page,
  type ParseDocumentOptions,
  type ParsedDocument,
  type ParseObserver,
  parseDocument,
  type SitemapType,
  type Warning,
} from '@usp-ts/core';
import { SITEMAP_NAMESPACE } from '@usp-ts/format-xml-sitemap';
import { nodeGunzip } from '../node/gunzip.js';
import type { Finding, FindingSeverity, ValidatedSitemap } from './validate.js';

// One document's checks: what validate sees while a document is parsed, and what it concludes.
// `validateDocument` runs them on a document in hand, `validateSitemap` as the walk's parser.

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
export class DocumentCheck implements ParseObserver {
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

export interface DocumentResult {
  check: DocumentCheck;
  parsed: ParsedDocument;
  summary: ValidatedSitemap;
}

/** Count past the protocol's limits instead of stopping at them. */
export const CHECK_LIMITS = { maxPagesPerDocument: 5_000_000, maxChildrenPerIndex: 5_000_000 } as const;

/**
 * Parses one document watched by `check` (its pages counted, not kept) and checks it. A parser's
 * own `onPages` and `onWarning` are not used: the check hears every page and warning.
 */
export async function checkDocument(
  options: Omit<ParseDocumentOptions, 'onPages' | 'onWarning' | 'observer'>,
  check: DocumentCheck,
  contentTypeCheck: boolean,
): Promise<DocumentResult> {
  const parsed = await parseDocument({
    ...options,
    observer: check,
    onWarning: (w) => check.driverWarning(w),
    gunzip: nodeGunzip,
    limits: CHECK_LIMITS,
  });
  return checkParsed(check, parsed, options.headers ?? (() => null), contentTypeCheck);
}

function checkParsed(
  check: DocumentCheck,
  parsed: ParsedDocument,
  headers: HeaderLookup,
  contentTypeCheck: boolean,
): DocumentResult {
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
  const contentType = headers('content-type');
  if (contentTypeCheck && !check.has('html'))
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
