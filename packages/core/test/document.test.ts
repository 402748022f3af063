import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../src/contract/errors.js';
import type { Page } from '../src/contract/model.js';
import { countingPageStore } from '../src/contract/page-store.js';
import { sitemapFromDocument } from '../src/contract/parsed-document.js';
import type { XmlFormat } from '../src/contract/plugin.js';
import { createRegistry } from '../src/contract/registry.js';
import {
  IndexXMLSitemap,
  InvalidSitemap,
  isPagesSitemap,
  type PagesSitemap,
  type PagesSitemapType,
} from '../src/contract/sitemap.js';
import { SitemapDate } from '../src/contract/sitemap-date.js';
import type { Warning } from '../src/contract/warning.js';
import { parseDocument } from '../src/engine/document.js';
import { DEFAULT_DOCUMENT_LIMITS, type ParseDocumentOptions } from '../src/engine/document-options.js';
import { type ParseSitemapNodeOptions, parseSitemap } from '../src/engine/parse-sitemap.js';
import {
  pageUrls,
  SITEMAP_NS,
  tinyIndex,
  tinyRobots,
  tinyText,
  tinyUrlset,
  urlsetXml,
} from './tiny-formats.js';

const registry = createRegistry([tinyUrlset(), tinyIndex(), tinyRobots(), tinyText()]);
const URL_XML = 'http://example.com/sitemap.xml';
const enc = new TextEncoder();

function parse(body: ParseDocumentOptions['body'], extra: Partial<ParseSitemapNodeOptions> = {}) {
  return parseSitemap({ url: URL_XML, body, registry, ...extra });
}

function urlsOf(sitemap: unknown): string[] {
  expect(isPagesSitemap(sitemap as PagesSitemap)).toBe(true);
  return (sitemap as PagesSitemap).pages.map((p) => p.url);
}

function codes(warnings: readonly Warning[]): string[] {
  return warnings.map((w) => w.code);
}

async function* chunks(parts: readonly (Uint8Array | string)[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield typeof part === 'string' ? enc.encode(part) : part;
}

/** Yields the parts, then fails as a reset connection would. */
async function* breaking(
  parts: readonly (Uint8Array | string)[],
  error: unknown,
): AsyncGenerator<Uint8Array> {
  yield* chunks(parts);
  throw error;
}

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const casesDir = join(process.env.USP_SHARED_DIR ?? join(repoRoot, '..', 'shared'), 'conformance', 'cases');
const haveCorpus = existsSync(casesDir);
if (!haveCorpus)
  console.warn(`[document.test] conformance corpus not found at ${casesDir}: pinned cases run inline only`);

function corpusInput(name: string, file: string): Uint8Array | null {
  const path = join(casesDir, name, file);
  return existsSync(path) ? new Uint8Array(readFileSync(path)) : null;
}

describe('parseDocument: bodies', () => {
  const xml = urlsetXml(pageUrls(3));
  it('reads a string, a Uint8Array and an async iterable alike', async () => {
    for (const body of [xml, enc.encode(xml), chunks([xml.slice(0, 50), xml.slice(50)])]) {
      const doc = await parse(body);
      expect(doc.sitemap.type).toBe('PagesXMLSitemap');
      expect(urlsOf(doc.sitemap)).toEqual(pageUrls(3));
      expect(doc.truncated).toBe(false);
      expect(doc.format).toBe('tiny-urlset');
      expect(doc.warnings).toEqual([]);
    }
  });

  it('counts decoded bytes and reports the encoding', async () => {
    const doc = await parse(enc.encode(xml));
    expect(doc.bytes).toBe(enc.encode(xml).length);
    expect(doc.encoding).toBe('utf-8');
    expect(doc.gzipLayers).toBe(0);
  });

  it('puts the parent index lastmod on the node', async () => {
    const lastModified = new SitemapDate(Date.UTC(2024, 0, 2), 0);
    const doc = await parse(xml, { lastModified });
    expect(doc.sitemap.lastModified).toBe(lastModified);
  });

  it('builds an index node with its entries and children', async () => {
    const index = `<sitemapindex xmlns="${SITEMAP_NS}"><sitemap><loc>http://example.com/a.xml</loc></sitemap><sitemap><loc>http://example.com/b.xml</loc></sitemap></sitemapindex>`;
    const doc = await parse(index);
    expect(doc.sitemap.type).toBe('IndexXMLSitemap');
    expect(doc.children.map((c) => c.url)).toEqual(['http://example.com/a.xml', 'http://example.com/b.xml']);
    expect((doc.sitemap as unknown as { entries: unknown[] }).entries).toHaveLength(2);
  });

  it('builds a robots.txt node with rules and entries', async () => {
    const doc = await parseSitemap({
      url: 'http://example.com/robots.txt',
      body: 'User-agent: *\nSitemap: http://example.com/s.xml\n',
      registry,
    });
    expect(doc.sitemap.type).toBe('IndexRobotsTxtSitemap');
    expect(doc.children.map((c) => c.url)).toEqual(['http://example.com/s.xml']);
    expect((doc.sitemap as unknown as { robots: unknown }).robots).not.toBeNull();
    expect(doc.format).toBe('tiny-robots');
  });

  it('gives an empty document to the text formats (0 pages, as usp)', async () => {
    for (const body of ['', '   \n\t ', new Uint8Array(0)]) {
      const doc = await parse(body);
      expect(doc.sitemap.type).toBe('PagesTextSitemap');
      expect(urlsOf(doc.sitemap)).toEqual([]);
    }
  });

  it('removes a BOM from a string body', async () => {
    const doc = await parse(`\uFEFF${xml}`);
    expect(urlsOf(doc.sitemap)).toEqual(pageUrls(3));
  });
});

describe('parseDocument: detection', () => {
  const xml = urlsetXml(pageUrls(2));

  it('finds gzip by its magic bytes, whatever the URL and headers say', async () => {
    const doc = await parseSitemap({
      url: 'http://example.com/sitemap.xml',
      body: new Uint8Array(gzipSync(xml)),
      registry,
      headers: () => 'text/xml',
    });
    expect(urlsOf(doc.sitemap)).toEqual(pageUrls(2));
    expect(doc.gzipLayers).toBe(1);
  });

  it('reads plain XML served under a .gz name with a gzip Content-Type', async () => {
    const doc = await parseSitemap({
      url: 'http://example.com/sitemap.xml.gz',
      body: enc.encode(xml),
      registry,
      headers: (name) => (name.toLowerCase() === 'content-type' ? 'application/x-gzip' : null),
    });
    expect(urlsOf(doc.sitemap)).toEqual(pageUrls(2));
    expect(doc.gzipLayers).toBe(0);
    expect(doc.warnings).toEqual([]);
  });

  it('unwraps nested gzip up to three layers', async () => {
    const twice = gzipSync(gzipSync(xml));
    const doc = await parse(new Uint8Array(twice));
    expect(urlsOf(doc.sitemap)).toEqual(pageUrls(2));
    expect(doc.gzipLayers).toBe(2);
    const four = gzipSync(gzipSync(gzipSync(gzipSync(xml))));
    const deep = await parse(new Uint8Array(four));
    // The fourth layer is left alone: binary, so not XML; no text page comes out of it.
    expect(deep.gzipLayers).toBe(3);
    expect(deep.sitemap.type).toBe('PagesTextSitemap');
    expect(urlsOf(deep.sitemap)).toEqual([]);
  });

  it('keeps what decompressed from a gzip stream cut in the middle', async () => {
    const full = urlsetXml(pageUrls(2000));
    const gz = gzipSync(full);
    const doc = await parse(new Uint8Array(gz.subarray(0, gz.length >> 1)));
    const urls = urlsOf(doc.sitemap);
    expect(urls.length).toBeGreaterThan(10);
    expect(urls.length).toBeLessThan(2000);
    expect(urls).toEqual(pageUrls(urls.length));
    expect(doc.truncated).toBe(true);
    expect(codes(doc.warnings)).toContain('gzip');
  });

  it("pins 'gzip-truncated-stream': a cut .gz is read as far as it decompresses", async () => {
    const input = corpusInput('gzip-truncated-stream', 'input.xml.gz');
    if (input === null) return;
    const doc = await parseSitemap({ url: 'http://example.com/sitemap.xml.gz', body: input, registry });
    // usp falls back to the compressed bytes as text (PagesTextSitemap, 0 pages). Only a cut XML
    // declaration decompresses here, so: no root element, and the gzip damage is reported.
    expect(doc.gzipLayers).toBe(1);
    expect(doc.sitemap.type).toBe('InvalidSitemap');
    expect((doc.sitemap as InvalidSitemap).reason).toBe(
      'No parsers support sitemap from http://example.com/sitemap.xml.gz: no root element',
    );
    expect(doc.truncated).toBe(true);
    expect(codes(doc.warnings)).toContain('gzip');
  });

  it("pins 'xml-more-than-20-leading-whitespace': XML after any amount of whitespace is XML", async () => {
    const body =
      corpusInput('xml-more-than-20-leading-whitespace', 'input.xml') ??
      enc.encode(`${' '.repeat(25)}${xml}`);
    const doc = await parse(body);
    expect(doc.sitemap.type).toBe('PagesXMLSitemap');
    expect(urlsOf(doc.sitemap).length).toBeGreaterThan(0);
    const far = await parse(`${' \n\t'.repeat(100_000)}${xml}`);
    expect(urlsOf(far.sitemap)).toEqual(pageUrls(2));
  });

  it("pins 'xml-declaration-after-leading-whitespace': whitespace before <?xml is tolerated", async () => {
    const body =
      corpusInput('xml-declaration-after-leading-whitespace', 'input.xml') ?? enc.encode(`\n  ${xml}`);
    const doc = await parse(body);
    expect(doc.sitemap.type).toBe('PagesXMLSitemap');
    expect(urlsOf(doc.sitemap)).toEqual(haveCorpus ? ['http://example.com/a'] : pageUrls(2));
  });

  it("pins 'xml-latin1-declared-encoding': the declared encoding is honoured", async () => {
    const body =
      corpusInput('xml-latin1-declared-encoding', 'input.xml') ??
      Uint8Array.from(
        `<?xml version="1.0" encoding="ISO-8859-1"?>\n<urlset xmlns="${SITEMAP_NS}"><url><loc>http://example.com/caf\xe9</loc></url></urlset>\n`,
        (c) => c.charCodeAt(0),
      );
    const doc = await parse(body);
    expect(urlsOf(doc.sitemap)).toEqual(['http://example.com/café']);
    expect(doc.encoding).toBe('windows-1252');
  });

  it('sends a document whose first character is not < to the text formats', async () => {
    const doc = await parse('http://example.com/a\nnot a url\nhttp://example.com/b\n');
    expect(doc.sitemap.type).toBe('PagesTextSitemap');
    expect(urlsOf(doc.sitemap)).toEqual(['http://example.com/a', 'http://example.com/b']);
  });

  it('asks text formats in order; the first claim wins', async () => {
    const seen: string[] = [];
    const first = {
      ...tinyText(),
      name: 'first',
      claims: () => {
        seen.push('first');
        return false;
      },
    };
    const second = {
      ...tinyText(),
      name: 'second',
      claims: () => {
        seen.push('second');
        return true;
      },
    };
    const third = {
      ...tinyText(),
      name: 'third',
      claims: () => {
        seen.push('third');
        return true;
      },
    };
    const doc = await parseSitemap({
      url: URL_XML,
      body: 'http://example.com/a',
      registry: createRegistry([first, second, third]),
    });
    expect(seen).toEqual(['first', 'second']);
    expect(doc.format).toBe('second');
  });

  it('hands text formats the URL, headers and the first 1,024 characters', async () => {
    let head = '';
    let type: string | null = null;
    const spy = {
      ...tinyText(),
      claims: (doc: { head: string; headers: (n: string) => string | null }) => {
        head = doc.head;
        type = doc.headers('content-type');
        return true;
      },
    };
    const body = `${'http://example.com/x\n'.repeat(200)}`;
    await parseDocument({
      url: URL_XML,
      body,
      registry: createRegistry([spy]),
      headers: () => 'text/plain',
    });
    expect(head).toBe(body.slice(0, 1024));
    expect(type).toBe('text/plain');
  });

  it('makes an InvalidSitemap when no text format claims the document', async () => {
    const doc = await parseSitemap({
      url: URL_XML,
      body: 'hello',
      registry: createRegistry([tinyUrlset()]),
    });
    expect(doc.sitemap).toBeInstanceOf(InvalidSitemap);
    expect((doc.sitemap as InvalidSitemap).reason).toMatch(
      /^No parsers support sitemap from http:\/\/example\.com\/sitemap\.xml/,
    );
    expect(doc.format).toBeNull();
  });

  it('names the root element of an unclaimed XML document', async () => {
    const doc = await parse('<html><head><title>Not found</title></head></html>');
    expect((doc.sitemap as InvalidSitemap).reason).toBe(
      `No parsers support sitemap from ${URL_XML}: unsupported root element <html>`,
    );
    const rdf = await parse('<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"></rdf:RDF>');
    expect((rdf.sitemap as InvalidSitemap).reason).toBe(
      `No parsers support sitemap from ${URL_XML}: unsupported root element <rdf:RDF> in namespace http://www.w3.org/1999/02/22-rdf-syntax-ns#`,
    );
  });

  it('says an HTML page served as a sitemap is one, and refuses an XML DOCTYPE for security', async () => {
    const doc = await parse('<!DOCTYPE html>\n<html><body>Oops</body></html>');
    expect(doc.sitemap.type).toBe('InvalidSitemap');
    expect((doc.sitemap as InvalidSitemap).reason).toMatch(
      /^No parsers support sitemap from .*: HTML page, not a sitemap/,
    );
    expect(codes(doc.warnings)).toEqual(['not-a-sitemap']);
    const xml = await parse('<?xml version="1.0"?><!DOCTYPE urlset SYSTEM "x.dtd"><urlset/>');
    expect((xml.sitemap as InvalidSitemap).reason).toMatch(/DOCTYPE declaration, refused for security/);
    expect(codes(xml.warnings)).toContain('doctype-refused');
  });
});

describe('parseDocument: streaming', () => {
  it('delivers pages after each chunk, tagged with the node type', async () => {
    const xml = urlsetXml(pageUrls(6));
    const cut = xml.indexOf('</url>', xml.indexOf('page-2')) + 6;
    const batches: [string[], PagesSitemapType][] = [];
    const doc = await parse(chunks([xml.slice(0, cut), xml.slice(cut)]), {
      onPages: (pages, type) => {
        batches.push([pages.map((p) => p.url), type]);
      },
    });
    expect(batches).toEqual([
      [pageUrls(3), 'PagesXMLSitemap'],
      [pageUrls(6).slice(3), 'PagesXMLSitemap'],
    ]);
    expect(urlsOf(doc.sitemap)).toEqual(pageUrls(6));
  });

  it("hands a large chunk's pages on a piece of its text at a time, in order", async () => {
    // One 150 KB chunk: its pages go to onPages as each 16 K-character piece is read, so no
    // batch holds the whole chunk's pages (they would outlive the scavenges of its parse).
    const xml = urlsetXml(pageUrls(3000));
    async function* body() {
      yield enc.encode(xml);
    }
    const batches: string[][] = [];
    const doc = await parse(body(), {
      onPages: (pages) => {
        batches.push(pages.map((p) => p.url));
      },
    });
    expect(batches.length).toBeGreaterThanOrEqual(Math.floor(xml.length / (16 * 1024)));
    expect(Math.max(...batches.map((b) => b.length))).toBeLessThan(3000 / 4);
    expect(batches.flat()).toEqual(pageUrls(3000));
    expect(urlsOf(doc.sitemap)).toEqual(pageUrls(3000));
  });

  it('tags text pages with the text type', async () => {
    const types = new Set<string>();
    await parse('http://example.com/a\n', { onPages: (_p, type) => void types.add(type) });
    expect([...types]).toEqual(['PagesTextSitemap']);
  });

  it('does not read the next chunk while onPages is pending (backpressure)', async () => {
    const xml = urlsetXml(pageUrls(4));
    const parts = [xml.slice(0, 120), xml.slice(120, 200), xml.slice(200)];
    let pulled = 0;
    let pending = false;
    let overlap = false;
    async function* body() {
      for (const p of parts) {
        if (pending) overlap = true;
        pulled++;
        yield enc.encode(p);
      }
    }
    await parse(body(), {
      onPages: async () => {
        pending = true;
        await new Promise((r) => setImmediate(r));
        pending = false;
      },
    });
    expect(pulled).toBe(3);
    expect(overlap).toBe(false);
  });

  it('rethrows what onPages throws (a caller error)', async () => {
    const boom = new Error('consumer failed');
    await expect(
      parse(urlsetXml(pageUrls(2)), {
        onPages: () => {
          throw boom;
        },
      }),
    ).rejects.toBe(boom);
  });

  it('rethrows what onPages throws for a streamed body too, and releases the body', async () => {
    const boom = new Error('consumer failed');
    let released = false;
    async function* body() {
      try {
        yield enc.encode(urlsetXml(pageUrls(2)).slice(0, 150));
        yield enc.encode('<url><loc>http://example.com/x</loc></url>');
      } finally {
        released = true;
      }
    }
    await expect(
      parse(body(), {
        onPages: () => {
          throw boom;
        },
      }),
    ).rejects.toBe(boom);
    expect(released).toBe(true);
  });

  it('stops promptly on abort, keeping what was read', async () => {
    const xml = urlsetXml(pageUrls(3));
    const controller = new AbortController();
    let returned = false;
    const body: AsyncIterable<Uint8Array> = {
      [Symbol.asyncIterator]() {
        let step = 0;
        return {
          next: () => {
            step++;
            if (step === 1)
              return Promise.resolve({
                done: false,
                value: enc.encode(xml.slice(0, xml.lastIndexOf('<url>'))),
              });
            // The server stops sending: only the abort can end this.
            queueMicrotask(() => controller.abort());
            return new Promise<IteratorResult<Uint8Array>>(() => {});
          },
          return: () => {
            returned = true;
            return Promise.resolve({ done: true, value: undefined });
          },
        };
      },
    };
    const doc = await parse(body, { signal: controller.signal });
    expect(urlsOf(doc.sitemap)).toEqual(pageUrls(2));
    expect(doc.truncated).toBe(true);
    expect(codes(doc.warnings)).toContain('truncated');
    expect(returned).toBe(true);
  });

  it('keeps the pages read before a body that breaks (warning fetch)', async () => {
    const xml = urlsetXml(pageUrls(5));
    const cut = xml.indexOf('page-3');
    const doc = await parse(breaking([xml.slice(0, cut)], new TypeError('terminated')));
    expect(urlsOf(doc.sitemap)).toEqual(pageUrls(3));
    expect(doc.truncated).toBe(true);
    expect(codes(doc.warnings)).toContain('fetch');
  });

  it("maps a body error with code 'too-large' to the too-large warning", async () => {
    const err = Object.assign(new Error('body over 10 bytes'), { code: 'too-large' });
    const doc = await parse(breaking([urlsetXml(pageUrls(1)).slice(0, 20)], err));
    expect(codes(doc.warnings)).toContain('too-large');
    expect(doc.truncated).toBe(true);
  });

  it('drops the cut last line of a text document whose body broke', async () => {
    const doc = await parse(
      breaking(['http://example.com/a\nhttp://example.com/b\nhttp://exam'], new Error('reset')),
    );
    expect(urlsOf(doc.sitemap)).toEqual(['http://example.com/a', 'http://example.com/b']);
  });
});

describe('parseDocument: limits', () => {
  it('has documented defaults', () => {
    expect(DEFAULT_DOCUMENT_LIMITS).toEqual({
      maxPagesPerDocument: 1_000_000,
      maxChildrenPerIndex: 50_000,
      maxUrlLength: 65_536,
      maxDecompressedBytes: 100 * 1024 * 1024,
      maxElementDepth: 256,
      maxTextLength: 1024 * 1024,
    });
  });

  it('stops at maxDecompressedBytes with too-large, keeping what was read', async () => {
    const xml = urlsetXml(pageUrls(1000));
    const doc = await parse(enc.encode(xml), { limits: { maxDecompressedBytes: 10_000 } });
    const urls = urlsOf(doc.sitemap);
    expect(urls.length).toBeGreaterThan(10);
    expect(urls).toEqual(pageUrls(urls.length));
    expect(doc.bytes).toBe(10_000);
    expect(doc.truncated).toBe(true);
    expect(codes(doc.warnings)).toContain('too-large');
  });

  it('caps the output of a gzip bomb', async () => {
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(100_000);
    const doc = await parse(new Uint8Array(bomb), { limits: { maxDecompressedBytes: 1024 * 1024 } });
    expect(doc.bytes).toBeLessThanOrEqual(1024 * 1024);
    expect(codes(doc.warnings)).toContain('too-large');
    expect(doc.truncated).toBe(true);
  });

  it('says the same thing twice about a bomb past the sitemaps.org size, and nothing about its whitespace', async () => {
    // Issue 14 item 5: "all is read" then "the rest was not read"; and the padding between
    // elements was reported as character data of <urlset>.
    const spec = 52_428_800;
    const cap = spec + 1024 * 1024;
    const head = `<urlset xmlns="${SITEMAP_NS}"><url><loc>http://example.com/a</loc></url>`;
    const bomb = gzipSync(
      Buffer.concat([
        Buffer.from(head),
        Buffer.alloc(cap, 0x20),
        Buffer.from('<url><loc>http://example.com/b</loc></url>'),
      ]),
    );
    const doc = await parse(new Uint8Array(bomb), { limits: { maxDecompressedBytes: cap } });
    expect(urlsOf(doc.sitemap)).toEqual(['http://example.com/a']);
    expect(doc.warnings.map((w) => [w.code, w.message])).toEqual([
      [
        'over-spec',
        `Larger than ${spec} bytes uncompressed (the sitemaps.org limit); read on up to the size cap of ${cap} bytes`,
      ],
      ['too-large', `Larger than ${cap} bytes uncompressed (the size cap); the rest was not read`],
    ]);
  });

  it('still reports real character data cut at maxTextLength', async () => {
    const xml = `<urlset xmlns="${SITEMAP_NS}"><url><loc>http://example.com/${'x'.repeat(300)}</loc></url></urlset>`;
    const doc = await parse(xml, { limits: { maxTextLength: 100 } });
    expect(doc.warnings.map((w) => w.code)).toContain('limit');
  });

  it('stops at maxPagesPerDocument and leaves the rest of the body unread', async () => {
    const xml = urlsetXml(pageUrls(500));
    let pulled = 0;
    async function* body() {
      for (let i = 0; i < xml.length; i += 1000) {
        pulled++;
        yield enc.encode(xml.slice(i, i + 1000));
      }
    }
    const doc = await parse(body(), { limits: { maxPagesPerDocument: 10 } });
    expect(urlsOf(doc.sitemap)).toEqual(pageUrls(10));
    expect(doc.truncated).toBe(true);
    expect(codes(doc.warnings)).toContain('limit');
    expect(pulled).toBeLessThan(5);
  });

  it('stops at maxChildrenPerIndex with a limit warning', async () => {
    const locs = pageUrls(30, 'http://example.com/s-').map((u) => `<sitemap><loc>${u}</loc></sitemap>`);
    const doc = await parse(`<sitemapindex xmlns="${SITEMAP_NS}">${locs.join('')}</sitemapindex>`, {
      limits: { maxChildrenPerIndex: 7 },
    });
    expect(doc.children).toHaveLength(7);
    expect(codes(doc.warnings)).toContain('limit');
    expect(doc.truncated).toBe(true);
  });

  it('drops URLs longer than maxUrlLength', async () => {
    const long = `http://example.com/${'a'.repeat(200)}`;
    const doc = await parse(urlsetXml(['http://example.com/ok', long]), { limits: { maxUrlLength: 100 } });
    expect(urlsOf(doc.sitemap)).toEqual(['http://example.com/ok']);
    expect(codes(doc.warnings)).toContain('invalid-url');
  });

  it('warns over-spec past 50,000 pages but reads them all', async () => {
    const urls = pageUrls(50_001, 'http://e.co/');
    const doc = await parse(urlsetXml(urls));
    expect((doc.sitemap as PagesSitemap).pageCount).toBe(50_001);
    expect(codes(doc.warnings)).toEqual(['over-spec']);
    expect(doc.truncated).toBe(false);
  });

  it('keeps 100 warnings per code and summarises the rest', async () => {
    const seen: Warning[] = [];
    const urls = pageUrls(150).map((u) => `${u}${'x'.repeat(50)}`);
    const doc = await parse(urlsetXml(urls), {
      limits: { maxUrlLength: 20 },
      onWarning: (w) => seen.push(w),
    });
    expect(doc.warnings).toHaveLength(101);
    expect(doc.warnings[100].message).toMatch(/^50 more 'invalid-url' warnings/);
    expect(seen).toEqual(doc.warnings);
    expect(doc.sitemap.warnings).toBe(doc.warnings);
    for (const w of doc.warnings) expect(w.url).toBe(URL_XML);
  });

  it('rejects bad options with InvalidOptionError', async () => {
    const bad: unknown[] = [
      { url: '', body: '', registry },
      { url: URL_XML, body: 42, registry },
      { url: URL_XML, body: '', registry: {} },
      { url: URL_XML, body: '', registry, limits: { maxPagesPerDocument: 0 } },
      { url: URL_XML, body: '', registry, limits: { maxPages: 5 } },
      { url: URL_XML, body: '', registry, onPages: 'no' },
    ];
    for (const options of bad) {
      await expect(parseDocument(options as ParseDocumentOptions)).rejects.toBeInstanceOf(InvalidOptionError);
    }
    await expect(
      parseDocument({ url: URL_XML, body: '', registry, onWarnings: () => {} } as ParseDocumentOptions),
    ).rejects.toThrow('Option onWarnings: unknown option (did you mean onWarning?)');
  });
});

describe('parseDocument: formats that fail', () => {
  it('turns a throwing format into a plugin-error warning, keeping its pages', async () => {
    const base = tinyUrlset();
    const flaky: XmlFormat = {
      ...base,
      createHandler(ctx, root) {
        const h = base.createHandler(ctx, root);
        let n = 0;
        return {
          ...h,
          close(el, text) {
            if (el.local === 'url' && ++n === 3) throw new Error('bug');
            h.close(el, text);
          },
        };
      },
    };
    const doc = await parseSitemap({
      url: URL_XML,
      body: urlsetXml(pageUrls(5)),
      registry: createRegistry([flaky]),
    });
    expect(urlsOf(doc.sitemap)).toEqual(pageUrls(2));
    expect(codes(doc.warnings)).toContain('plugin-error');
    expect(doc.truncated).toBe(true);
  });

  it('keeps going when a warning listener throws', async () => {
    const doc = await parse(urlsetXml(['http://example.com/a', `http://example.com/${'b'.repeat(100)}`]), {
      limits: { maxUrlLength: 50 },
      onWarning: () => {
        throw new Error('listener bug');
      },
    });
    expect(urlsOf(doc.sitemap)).toEqual(['http://example.com/a']);
  });
});

describe('parseDocument: pages storage', () => {
  it('writes pages to the given page store and releases them for non-pages nodes', async () => {
    const appended: Page[] = [];
    let released = false;
    const pageStore = {
      open: () => ({
        append: (p: Page) => void appended.push(p),
        close: () => ({
          count: appended.length,
          load: () => [...appended],
          release: () => {
            released = true;
          },
        }),
      }),
    };
    const doc = await parse(urlsetXml(pageUrls(2)), { pageStore });
    expect(appended.map((p) => p.url)).toEqual(pageUrls(2));
    expect((doc.sitemap as PagesSitemap).pageCount).toBe(2);
    expect(released).toBe(false);
    const html = await parse('<html/>', { pageStore });
    expect(html.sitemap.type).toBe('InvalidSitemap');
    expect(released).toBe(true);
  });
});

describe('parseDocument: memory', () => {
  it('keeps no document chunk alive through the pages it returns', async () => {
    const { setFlagsFromString } = await import('node:v8');
    const { runInNewContext } = await import('node:vm');
    setFlagsFromString('--expose_gc');
    const gc = runInNewContext('gc') as () => void;
    // 200 short entries, each followed by 60 KB of comment: 12 MB of document, 200 URLs.
    const pad = `<!--${'x'.repeat(60_000)}-->`;
    async function* body() {
      yield enc.encode(`<urlset xmlns="${SITEMAP_NS}">`);
      for (let i = 0; i < 200; i++)
        yield enc.encode(`<url><loc>http://example.com/page-${i}</loc></url>${pad}`);
      yield enc.encode('</urlset>');
    }
    gc();
    const before = process.memoryUsage().heapUsed;
    const doc = await parse(body());
    gc();
    const kept = process.memoryUsage().heapUsed - before;
    expect((doc.sitemap as PagesSitemap).pageCount).toBe(200);
    // Without detaching, each URL pins its 60 KB chunk (12 MB in all).
    expect(kept).toBeLessThan(2_000_000);
  });

  it('does not hold read chunks while waiting on an abort signal', async () => {
    const { setFlagsFromString } = await import('node:v8');
    const { runInNewContext } = await import('node:vm');
    setFlagsFromString('--expose_gc');
    const gc = runInNewContext('gc') as () => void;
    const chunk = enc.encode(`${'<url><loc>http://example.com/a</loc></url>'.repeat(1500)}`);
    let peak = 0;
    let base = 0;
    async function* body() {
      yield enc.encode(`<urlset xmlns="${SITEMAP_NS}">`);
      for (let i = 0; i < 200; i++) {
        if (i % 50 === 49) {
          gc();
          const m = process.memoryUsage();
          peak = Math.max(peak, m.heapUsed + m.arrayBuffers - base);
        }
        yield chunk.slice();
      }
      yield enc.encode('</urlset>');
    }
    gc();
    const m = process.memoryUsage();
    base = m.heapUsed + m.arrayBuffers;
    const doc = await parse(body(), {
      signal: new AbortController().signal,
      pageStore: countingPageStore(),
    });
    expect((doc.sitemap as PagesSitemap).pageCount).toBe(300_000);
    // 12 MB flows through; a reader that kept its chunks would hold most of it. Half of it is
    // the bound: the V8 of Node 24 counts 3.3 MB at the peak where Node 20's counted under 3.
    expect(peak).toBeLessThan(6_000_000);
  });
});

describe('parseDocument: a plain description, one page sink, one node builder', () => {
  it('returns plain data (no node) and hands pages to onPages only', async () => {
    const seen: string[] = [];
    const doc = await parseDocument({
      url: URL_XML,
      body: urlsetXml(pageUrls(3)),
      registry,
      onPages: (pages) => void seen.push(...pages.map((p) => p.url)),
    });
    expect('sitemap' in doc).toBe(false);
    expect(doc).toMatchObject({ url: URL_XML, type: 'PagesXMLSitemap', pageCount: 3, children: [] });
    expect(seen).toEqual(pageUrls(3));
    // Plain data: it survives a structured clone (a worker's postMessage) unchanged.
    expect(structuredClone(doc)).toEqual(doc);
  });

  it('builds index, invalid and pages nodes sharing the description lists', async () => {
    const index = await parseDocument({
      url: URL_XML,
      body: `<sitemapindex xmlns="${SITEMAP_NS}"><sitemap><loc>http://example.com/a.xml</loc></sitemap></sitemapindex>`,
      registry,
    });
    const lastModified = new SitemapDate(0, 0);
    const node = sitemapFromDocument(index, { lastModified });
    expect(node).toBeInstanceOf(IndexXMLSitemap);
    expect((node as IndexXMLSitemap).entries).toBe(index.children);
    expect(node.warnings).toBe(index.warnings);
    expect(node.lastModified).toBe(lastModified);

    let released = false;
    const stored = {
      count: 1,
      load: () => [],
      release: () => {
        released = true;
      },
    };
    const html = await parseDocument({ url: URL_XML, body: '<html/>', registry });
    const invalid = sitemapFromDocument(html, { stored });
    expect(invalid.type).toBe('InvalidSitemap');
    expect((invalid as InvalidSitemap).reason).toBe(html.reason);
    expect(released).toBe(true);

    const pages = sitemapFromDocument(
      { url: URL_XML, type: 'PagesRSSSitemap', children: [], warnings: [], bytes: 0, truncated: false },
      { stored },
    );
    expect(pages.type).toBe('PagesRSSSitemap');
    expect((pages as PagesSitemap).pageCount).toBe(1);
  });
});
