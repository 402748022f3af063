import { once } from 'node:events';
import type { Writable } from 'node:stream';
import {
  isIndexSitemap,
  isPagesSitemap,
  type Page,
  type PagesSitemap,
  pageToJSON,
  plainPageDate,
  plainPageFields,
  type Sitemap,
  sitemapToJSON,
} from '@usp-ts/core';

/** Output formats of `usp ls` and `usp parse`. */
export const FORMATS = ['tabtree', 'pages', 'json', 'ndjson', 'csv'] as const;
export type Format = (typeof FORMATS)[number];

/**
 * Buffered writes to stdout that respect backpressure: `line()` returns a promise only when
 * the buffer had to be flushed into a full pipe, so callers `await` rarely.
 */
export class Output {
  readonly #stream: Writable;
  #parts: string[] = [];
  #size = 0;
  #scheduled = false;
  /** Escape control characters (a terminal would act on them). */
  readonly escapeControls: boolean;
  /** Write out what is buffered as soon as the producer pauses (lines that stream as they arrive). */
  readonly #eager: boolean;

  constructor(stream: Writable & { isTTY?: boolean }, options: { eager?: boolean } = {}) {
    this.#stream = stream;
    this.escapeControls = stream.isTTY === true;
    this.#eager = options.eager ?? false;
  }

  line(text: string): Promise<void> | undefined {
    this.#parts.push(text, '\n');
    this.#size += text.length + 1;
    if (this.#size >= 65_536) return this.flush();
    if (this.#eager && !this.#scheduled) {
      this.#scheduled = true;
      // Lines produced in one burst (a batch of pages) leave together, once the burst is over.
      setImmediate(() => {
        this.#scheduled = false;
        this.#writeOut();
      });
    }
    return undefined;
  }

  /** Bytes that are whole lines already, after what is buffered. */
  bytes(data: Uint8Array): Promise<void> | undefined {
    this.#writeOut();
    if (this.#stream.write(data)) return undefined;
    return once(this.#stream, 'drain').then(() => undefined);
  }

  /** True when the stream holds no bytes (the last ones written went out): they may be reused. */
  get idle(): boolean {
    return this.#stream.writableLength === 0;
  }

  /** Hands the buffer to the stream; `false` when the stream asks the writer to wait. */
  #writeOut(): boolean {
    if (this.#size === 0) return true;
    const data = this.#parts.join('');
    this.#parts = [];
    this.#size = 0;
    return this.#stream.write(data);
  }

  async flush(): Promise<void> {
    if (!this.#writeOut()) await once(this.#stream, 'drain');
  }
}

/**
 * usp's `--strip-url`: drop the homepage prefix, then make sure the rest starts with `/`
 * (so an off-host URL becomes `/https://other.host/...`, as usp prints it).
 */
export function stripUrl(url: string, prefix: string): string {
  if (prefix === '') return url;
  const rest = url.startsWith(prefix) ? url.slice(prefix.length) : url;
  return rest.startsWith('/') ? rest : `/${rest}`;
}

// C0 and C1 controls and DEL: a URL from a hostile sitemap could move the cursor or retitle the terminal.
const CONTROLS = /[\x00-\x1f\x7f-\x9f]/g;

function escapeControls(text: string): string {
  return text.replace(CONTROLS, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** A URL as a line-oriented format prints it: control characters escaped on a terminal. */
export function shown(out: Output, url: string): string {
  return out.escapeControls ? escapeControls(url) : url;
}

const ASCII = /^[\x00-\x7f]*$/;

/**
 * usp's tabtree: one line per node, tab-indented by depth; at each node its sub-sitemaps first
 * (recursively), then its pages one level deeper. The root line is never stripped.
 */
export async function writeTabTree(out: Output, root: Sitemap, stripPrefix = ''): Promise<void> {
  const printer = new TabTreePrinter(out, stripPrefix);
  await out.line(shown(out, root.url));
  const visit = async (node: Sitemap, depth: number): Promise<void> => {
    await printer.node(node, depth);
    if (isIndexSitemap(node)) for (const child of node.subSitemaps) await visit(child, depth + 1);
  };
  if (isIndexSitemap(root)) for (const child of root.subSitemaps) await visit(child, 1);
  else if (isPagesSitemap(root)) await printer.pages(root, 1);
}

/**
 * Prints tabtree one node at a time, in tree order: from a finished tree, or as the walk reports
 * its nodes (`onTreeNode`), so the tree is written while the rest of it is still being read.
 */
export class TabTreePrinter {
  readonly #out: Output;
  readonly #stripPrefix: string;
  /** Where the page store keeps its buffers from one sitemap to the next of this print. */
  readonly #scratch = {};

  constructor(out: Output, stripPrefix: string) {
    this.#out = out;
    this.#stripPrefix = stripPrefix;
  }

  /** The node's line at `depth` (> 0) and, for a pages sitemap, its pages one level deeper. */
  async node(node: Sitemap, depth: number): Promise<void> {
    const out = this.#out;
    await out.line('\t'.repeat(depth) + shown(out, stripUrl(node.url, this.#stripPrefix)));
    if (isPagesSitemap(node)) await this.pages(node, depth + 1);
  }

  async pages(node: PagesSitemap, depth: number): Promise<void> {
    const out = this.#out;
    const stripPrefix = this.#stripPrefix;
    const indent = '\t'.repeat(depth);
    // Pages in usp's temp files print from the file's bytes (the common case: a terminal
    // escapes control characters, and a prefix outside ASCII is compared as text).
    const chunks =
      out.escapeControls || !ASCII.test(stripPrefix)
        ? null
        : node.pageUrlLines({ indent, stripPrefix, scratch: this.#scratch });
    if (chunks !== null) {
      for (let r = chunks.next(); r.done !== true; r = chunks.next(out.idle)) {
        const p = out.bytes(r.value);
        if (p) await p;
      }
      return;
    }
    for (const page of node.iteratePages()) {
      const p = out.line(indent + shown(out, stripUrl(page.url, stripPrefix)));
      if (p) await p;
    }
  }
}

/** usp's pages format: every page of the tree, depth-first in document order, duplicates kept. */
export async function writePages(out: Output, root: Sitemap, stripPrefix = ''): Promise<void> {
  for (const page of root.allPages()) {
    const p = out.line(shown(out, stripUrl(page.url, stripPrefix)));
    if (p) await p;
  }
}

function indentLines(json: string, indent: string): string {
  return indent === '' ? json : json.replaceAll('\n', `\n${indent}`);
}

/**
 * The tree's JSON form (`sitemapToJSON`), indented as `JSON.stringify(json, null, 2)` would be,
 * but written node by node and page by page so a large tree never becomes one string.
 */
export async function writeJsonTree(out: Output, root: Sitemap): Promise<void> {
  let pending = '';
  const emit = async (text: string): Promise<void> => {
    pending += text;
    const nl = pending.lastIndexOf('\n');
    if (nl >= 0) {
      const lines = pending.slice(0, nl).split('\n');
      pending = pending.slice(nl + 1);
      for (const l of lines) {
        const p = out.line(l);
        if (p) await p;
      }
    }
  };
  const visit = async (node: Sitemap, indent: string): Promise<void> => {
    const head = sitemapToJSON(node, { withPages: false });
    delete head.subSitemaps;
    const opened = indentLines(JSON.stringify(head, null, 2), indent);
    let items: 'subSitemaps' | 'pages' | null = null;
    if (isIndexSitemap(node)) items = 'subSitemaps';
    else if (isPagesSitemap(node)) items = 'pages';
    if (items === null) {
      await emit(opened);
      return;
    }
    const inner = `${indent}    `;
    // `{...\n}` minus its closing brace, then the array as the last key.
    await emit(`${opened.slice(0, -(indent.length + 2))},\n${indent}  "${items}": [`);
    let first = true;
    const next = async (): Promise<void> => {
      await emit(`${first ? '' : ','}\n${inner}`);
      first = false;
    };
    if (items === 'subSitemaps' && isIndexSitemap(node)) {
      for (const child of node.subSitemaps) {
        await next();
        await visit(child, inner);
      }
    } else if (isPagesSitemap(node)) {
      for (const page of node.iteratePages()) {
        await next();
        await emit(indentLines(JSON.stringify(pageToJSON(page), null, 2), inner));
      }
    }
    await emit(first ? `]\n${indent}}` : `\n${indent}  ]\n${indent}}`);
  };
  await visit(root, '');
  await emit('\n');
}

/** One page as an NDJSON line: the sitemap it came from, then the page's JSON form. */
export function ndjsonLine(page: Page, sitemapUrl: string, stripPrefix = ''): string {
  const lm = plainPageDate(page);
  if (lm === undefined) return generalNdjsonLine(page, sitemapUrl, stripPrefix);
  // Written out by hand for the common page: the same bytes as the general path, without building
  // its object (-9 % CPU of a whole `usp ls -f ndjson`).
  return `{"sitemap":${quotedSitemap(sitemapUrl, stripPrefix)},${plainPageFields(page, lm, stripUrl(page.url, stripPrefix))}}`;
}

function generalNdjsonLine(page: Page, sitemapUrl: string, stripPrefix: string): string {
  const json = pageToJSON(page);
  return JSON.stringify({
    sitemap: stripUrl(sitemapUrl, stripPrefix),
    ...json,
    url: stripUrl(json.url, stripPrefix),
  });
}

// Consecutive pages mostly come from the same sitemap: quote its URL once.
let lastSitemap = '';
let lastPrefix = '';
let lastQuoted = '""';

function quotedSitemap(sitemapUrl: string, stripPrefix: string): string {
  if (sitemapUrl !== lastSitemap || stripPrefix !== lastPrefix) {
    lastSitemap = sitemapUrl;
    lastPrefix = stripPrefix;
    lastQuoted = JSON.stringify(stripUrl(sitemapUrl, stripPrefix));
  }
  return lastQuoted;
}

export const CSV_HEADER = [
  'sitemap',
  'url',
  'priority',
  'lastModified',
  'changeFrequency',
  'newsTitle',
  'newsPublishDate',
  'newsPublicationName',
  'newsPublicationLanguage',
  'images',
  'alternates',
  'extensions',
].join(',');

export function csvField(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  const s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/**
 * One page as a CSV row (RFC 4180 quoting); images and alternates space-separated. The last
 * column is `page.extensions` as JSON (Google Video's `videos`, a third party's own fields): an
 * extension reaches the CSV, as it reaches the NDJSON, by what it writes there.
 */
export function csvLine(page: Page, sitemapUrl: string, stripPrefix = ''): string {
  const lm = plainPageDate(page);
  if (lm !== undefined) {
    // The common page by hand, as for NDJSON: the same bytes as the general path below.
    const cf = page.changeFrequency;
    return `${csvField(stripUrl(sitemapUrl, stripPrefix))},${csvField(stripUrl(page.url, stripPrefix))},${String(page.priority)},${lm ?? ''},${cf === null ? '' : csvField(cf)},,,,,,,`;
  }
  const news = page.newsStory;
  return [
    stripUrl(sitemapUrl, stripPrefix),
    stripUrl(page.url, stripPrefix),
    page.priority,
    page.lastModified?.toSourceString(),
    page.changeFrequency,
    news?.title,
    news?.publishDate?.toSourceString(),
    news?.publicationName,
    news?.publicationLanguage,
    page.images
      ?.map((i) => i.loc)
      .filter((l) => l !== null)
      .join(' '),
    page.alternates?.map((a) => `${a.hreflang}=${a.href}`).join(' '),
    page.extensions === undefined ? undefined : JSON.stringify(page.extensions),
  ]
    .map(csvField)
    .join(',');
}

/** Writes a tree's pages as NDJSON or CSV lines, in tree order (for `parse` and finished trees). */
export async function writePageLines(
  out: Output,
  root: Sitemap,
  format: 'ndjson' | 'csv',
  stripPrefix = '',
): Promise<void> {
  if (format === 'csv') await out.line(CSV_HEADER);
  const visit = async (node: Sitemap): Promise<void> => {
    if (isIndexSitemap(node)) {
      for (const child of node.subSitemaps) await visit(child);
    } else if (isPagesSitemap(node)) {
      for (const page of node.iteratePages()) {
        const line =
          format === 'csv' ? csvLine(page, node.url, stripPrefix) : ndjsonLine(page, node.url, stripPrefix);
        const p = out.line(line);
        if (p) await p;
      }
    }
  };
  await visit(root);
}

/** Writes a finished tree in any format. */
export async function writeTree(out: Output, root: Sitemap, format: Format, stripPrefix = ''): Promise<void> {
  switch (format) {
    case 'tabtree':
      await writeTabTree(out, root, stripPrefix);
      break;
    case 'pages':
      await writePages(out, root, stripPrefix);
      break;
    case 'json':
      await writeJsonTree(out, root);
      break;
    case 'ndjson':
    case 'csv':
      await writePageLines(out, root, format, stripPrefix);
      break;
  }
  await out.flush();
}
