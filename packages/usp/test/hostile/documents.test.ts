/**
 * Hostile documents (issue 6): each yields what can be read, a clear reason or warning, and no
 * crash; memory stays under twice the configured caps however big the document; nothing is
 * fetched from an external entity.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { gzipSync } from 'node:zlib';
import {
  countingPageStore,
  createRegistry,
  type DocumentLimits,
  InvalidSitemap,
  isPagesSitemap,
  type PagesSitemap,
  type ParsedSitemap,
  type ParseSitemapNodeOptions,
  parseSitemap,
  type Registry,
  sitemapToJSON,
  sitemapTreeForUrlWithClient,
} from '@usp-ts/core';
import { googleImage } from '@usp-ts/ext-google-image';
import { googleNews } from '@usp-ts/ext-google-news';
import { googleVideo } from '@usp-ts/ext-google-video';
import { createWebClient } from '@usp-ts/fetcher';
import { atom } from '@usp-ts/format-atom';
import { robotsTxt } from '@usp-ts/format-robots';
import { rss } from '@usp-ts/format-rss';
import { plainText } from '@usp-ts/format-text';
import { xmlSitemap } from '@usp-ts/format-xml-sitemap';
import { startTestServer } from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The same formats, in the same order, as the default registry.
const registry: Registry = createRegistry([
  robotsTxt(),
  plainText(),
  xmlSitemap({ extensions: [googleNews(), googleImage(), googleVideo()] }),
  rss(),
  atom(),
]);

const SITEMAP_NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';
const URL = 'https://example.com/sitemap.xml';
const enc = new TextEncoder();

const urlEntries = (from: number, to: number): string => {
  let s = '';
  for (let i = from; i < to; i++) s += `<url><loc>https://example.com/p/${i}</loc></url>\n`;
  return s;
};
const urlset = (body: string): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="${SITEMAP_NS}">\n${body}</urlset>\n`;
const pageUrls = (n: number): string[] => Array.from({ length: n }, (_, i) => `https://example.com/p/${i}`);

function pagesOf(doc: ParsedSitemap): string[] {
  return isPagesSitemap(doc.sitemap) ? doc.sitemap.pages.map((p) => p.url) : [];
}
function codes(doc: ParsedSitemap): string[] {
  return doc.warnings.map((w) => w.code);
}

/**
 * Parses with the default tokenizer and, for a body that can be read twice, with sax alone
 * too: both must give the same result (the XML fast path, issue 37).
 */
async function parse(
  body: ParseSitemapNodeOptions['body'],
  extra: Partial<ParseSitemapNodeOptions> = {},
): Promise<ParsedSitemap> {
  const doc = await parseSitemap({ url: URL, body, registry, ...extra });
  if (typeof body === 'string' || body instanceof Uint8Array) {
    const sax = await parseSitemap({ url: URL, body, registry, ...extra, xmlTokenizer: 'sax' });
    const { sitemap, ...rest } = doc;
    const { sitemap: saxSitemap, ...saxRest } = sax;
    expect(rest).toEqual(saxRest);
    expect(sitemapToJSON(sitemap)).toEqual(sitemapToJSON(saxSitemap));
  }
  return doc;
}

// ---------------------------------------------------------------------------------------------
// Memory: live heap plus array buffers, sampled after a full GC at chunk boundaries, so garbage
// does not count and what the parser holds does.

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;
const live = (): number => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

/** Small caps for the memory cases: the documents below are 3 to 25 times larger. */
const CAPS: Partial<DocumentLimits> = {
  maxDecompressedBytes: 4 * 1024 * 1024,
  maxTextLength: 256 * 1024,
  maxUrlLength: 64 * 1024,
};
const MEMORY_BOUND = 2 * (CAPS.maxDecompressedBytes as number);

/**
 * Parses a body produced piece by piece (never held whole) and reports the peak of live
 * memory above the level before the parse. Pages go to a counting store: the parser's own
 * memory is measured, not the pages it returns.
 */
async function parseMeasured(
  pieces: () => Iterable<Uint8Array>,
  extra: Partial<ParseSitemapNodeOptions> = {},
): Promise<{ doc: ParsedSitemap; peak: number }> {
  gc();
  const base = live();
  let peak = 0;
  let n = 0;
  async function* body(): AsyncGenerator<Uint8Array> {
    for (const piece of pieces()) {
      if (n++ % 4 === 0) {
        gc();
        peak = Math.max(peak, live() - base);
      }
      yield piece;
    }
  }
  const doc = await parseSitemap({
    url: URL,
    body: body(),
    registry,
    pageStore: countingPageStore(),
    limits: CAPS,
    ...extra,
  });
  gc();
  peak = Math.max(peak, live() - base);
  return { doc, peak };
}

function* repeat(text: string, totalBytes: number, head = '', tail = ''): Iterable<Uint8Array> {
  if (head) yield enc.encode(head);
  const block = enc.encode(text.repeat(Math.max(1, Math.floor((256 * 1024) / text.length))));
  for (let sent = 0; sent < totalBytes; sent += block.length) yield block.slice();
  if (tail) yield enc.encode(tail);
}

function* slices(bytes: Uint8Array, size = 64 * 1024): Iterable<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size);
}

// ---------------------------------------------------------------------------------------------

describe('hostile documents: entities', () => {
  it('refuses internal entity expansion (billion laughs) before it starts', async () => {
    const lol = [
      '<?xml version="1.0"?>',
      '<!DOCTYPE lolz [',
      '  <!ENTITY lol "lol">',
      ...Array.from(
        { length: 9 },
        (_, i) => `  <!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`,
      ),
      ']>',
      `<urlset xmlns="${SITEMAP_NS}"><url><loc>https://example.com/&lol9;</loc></url></urlset>`,
    ].join('\n');
    const { doc, peak } = await parseMeasured(() => [enc.encode(lol)]);
    expect(doc.sitemap).toBeInstanceOf(InvalidSitemap);
    expect((doc.sitemap as InvalidSitemap).reason).toMatch(
      /^No parsers support sitemap from .*DOCTYPE.*security/,
    );
    expect(codes(doc)).toContain('doctype-refused');
    expect(peak).toBeLessThan(MEMORY_BOUND);
  });

  it('refuses parameter entities', async () => {
    const doc = await parse(
      `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY % pe "<!ENTITY y 'z'>"> %pe;]><urlset xmlns="${SITEMAP_NS}"><url><loc>https://example.com/&y;</loc></url></urlset>`,
    );
    expect(doc.sitemap.type).toBe('InvalidSitemap');
    expect(codes(doc)).toContain('doctype-refused');
  });

  it('does not expand entity references without a DOCTYPE either', async () => {
    const doc = await parse(urlset('<url><loc>https://example.com/a&lol9;b</loc></url>\n'));
    expect(pagesOf(doc).every((u) => !u.includes('lollol'))).toBe(true);
    expect(codes(doc)).toContain('malformed-xml');
  });

  describe('external entities', () => {
    let server: Awaited<ReturnType<typeof startTestServer>>;
    beforeAll(async () => {
      server = await startTestServer({ '/secret': { body: 'https://example.com/leaked\n' } });
    });
    afterAll(async () => {
      await server.close();
    });

    it('refuses file:///etc/passwd and http://127.0.0.1/ entities and fetches nothing', async () => {
      const xxe = `<?xml version="1.0"?>
<!DOCTYPE urlset [
  <!ENTITY passwd SYSTEM "file:///etc/passwd">
  <!ENTITY secret SYSTEM "${server.origin}/secret">
]>
<urlset xmlns="${SITEMAP_NS}"><url><loc>https://example.com/&passwd;&secret;</loc></url></urlset>`;
      const doc = await parse(xxe);
      expect(doc.sitemap.type).toBe('InvalidSitemap');
      expect(codes(doc)).toContain('doctype-refused');
      expect(JSON.stringify(doc)).not.toMatch(/root:|leaked/);
      expect(server.requests).toEqual([]);
    });

    it('fetches only the sitemap itself in a real walk', async () => {
      server.route('/sitemap.xml', {
        headers: { 'Content-Type': 'application/xml' },
        body: `<?xml version="1.0"?><!DOCTYPE u [<!ENTITY s SYSTEM "${server.origin}/secret">]><urlset xmlns="${SITEMAP_NS}"><url><loc>&s;</loc></url></urlset>`,
      });
      const webClient = createWebClient({ allowPrivateNetworks: true, retries: 1 });
      try {
        const tree = await sitemapTreeForUrlWithClient(`${server.origin}/sitemap.xml`, {
          webClient,
          registry,
        });
        expect(tree.type).toBe('InvalidSitemap');
      } finally {
        await (webClient as { close?: () => Promise<void> }).close?.();
      }
      expect(server.requests).toEqual(['GET /sitemap.xml']);
    });
  });
});

describe('hostile documents: gzip', () => {
  it('stops a gzip bomb at the cap, keeping the entries before it, in bounded memory', async () => {
    const head = urlset(urlEntries(0, 3)).replace('</urlset>\n', '');
    const bomb = new Uint8Array(
      gzipSync(Buffer.concat([enc.encode(head), Buffer.alloc(40 * 1024 * 1024, 0x20)])),
    );
    expect(bomb.length).toBeLessThan(200 * 1024);
    const { doc, peak } = await parseMeasured(() => slices(bomb, 16 * 1024));
    expect((doc.sitemap as PagesSitemap).pageCount).toBe(3);
    expect(doc.bytes).toBeLessThanOrEqual(CAPS.maxDecompressedBytes as number);
    expect(doc.truncated).toBe(true);
    expect(codes(doc)).toContain('too-large');
    // Beyond the parser's own buffers, the decompressor may hold the whole expansion of one
    // 2 KiB input slice (about 2 MB of a bomb) that the reader has not taken yet: 12 MiB in all,
    // still far from the 40 MB the bomb expands to.
    expect(peak).toBeLessThan(MEMORY_BOUND + 4 * 1024 * 1024);
  });

  it('keeps the entries of a gzip stream cut in the middle', async () => {
    const gz = gzipSync(urlset(urlEntries(0, 2000)));
    const doc = await parse(new Uint8Array(gz.subarray(0, gz.length >> 1)));
    const urls = pagesOf(doc);
    expect(urls.length).toBeGreaterThan(100);
    expect(urls).toEqual(pageUrls(urls.length));
    expect(doc.truncated).toBe(true);
    expect(codes(doc)).toContain('gzip');
  });

  it('unwraps nested gzip (3 layers), and leaves a 4th layer as data', async () => {
    const xml = urlset(urlEntries(0, 5));
    const three = gzipSync(gzipSync(gzipSync(xml)));
    const doc = await parse(new Uint8Array(three));
    expect(pagesOf(doc)).toEqual(pageUrls(5));
    expect(doc.gzipLayers).toBe(3);
    const four = await parse(new Uint8Array(gzipSync(three)));
    expect(four.gzipLayers).toBe(3);
    expect(pagesOf(four)).toEqual([]);
  });
});

describe('hostile documents: size and shape', () => {
  it('reads a 10 MB sitemap on a single line', async () => {
    const entries = 210_000;
    const line = urlset(urlEntries(0, entries).replaceAll('\n', '')).replaceAll('\n', '');
    expect(line.length).toBeGreaterThan(10_000_000);
    const doc = await parse(enc.encode(line), { pageStore: countingPageStore() });
    expect((doc.sitemap as PagesSitemap).pageCount).toBe(entries);
    expect(doc.truncated).toBe(false);
  });

  it('drops a 10 MB text line with no newline, in bounded memory', async () => {
    const { doc, peak } = await parseMeasured(() => repeat('x', 10 * 1024 * 1024, 'https://example.com/'), {
      url: 'https://example.com/sitemap.txt',
      limits: { ...CAPS, maxDecompressedBytes: 16 * 1024 * 1024 },
    });
    expect(doc.sitemap.type).toBe('PagesTextSitemap');
    expect((doc.sitemap as PagesSitemap).pageCount).toBe(0);
    expect(doc.warnings.length).toBeGreaterThan(0);
    expect(peak).toBeLessThan(MEMORY_BOUND);
  });

  it('caps 10 MB of character data in one element, in bounded memory', async () => {
    const head = urlset(urlEntries(0, 2)).replace('</urlset>\n', '<url><loc>https://example.com/');
    const { doc, peak } = await parseMeasured(
      () => repeat('y', 10 * 1024 * 1024, head, `</loc></url>${urlEntries(2, 4)}</urlset>`),
      { limits: { ...CAPS, maxDecompressedBytes: 16 * 1024 * 1024 } },
    );
    expect((doc.sitemap as PagesSitemap).pageCount).toBe(4);
    expect(codes(doc)).toContain('limit');
    expect(peak).toBeLessThan(MEMORY_BOUND);
  });

  it('stops at 100,000-deep nesting, keeping the entries before it', async () => {
    const deep = urlset(`${urlEntries(0, 3)}${'<x>'.repeat(100_000)}`);
    const { doc, peak } = await parseMeasured(() => slices(enc.encode(deep)));
    expect((doc.sitemap as PagesSitemap).pageCount).toBe(3);
    expect(doc.truncated).toBe(true);
    expect(codes(doc)).toContain('limit');
    expect(peak).toBeLessThan(MEMORY_BOUND);
  });

  it('drops a 1 MB <loc> and keeps the others', async () => {
    const big = `https://example.com/${'a'.repeat(1024 * 1024)}`;
    const doc = await parse(urlset(`${urlEntries(0, 2)}<url><loc>${big}</loc></url>\n${urlEntries(2, 4)}`));
    expect(pagesOf(doc)).toEqual(pageUrls(4));
    expect(codes(doc).some((c) => c === 'invalid-url' || c === 'limit')).toBe(true);
  });

  it('reads a urlset of 60,000 entries, with an over-spec warning', async () => {
    const doc = await parse(urlset(urlEntries(0, 60_000)), { pageStore: countingPageStore() });
    expect((doc.sitemap as PagesSitemap).pageCount).toBe(60_000);
    expect(codes(doc)).toContain('over-spec');
    expect(doc.truncated).toBe(false);
  });

  it('keeps the first 50,000 children of an index with 100,000', async () => {
    let body = `<?xml version="1.0"?>\n<sitemapindex xmlns="${SITEMAP_NS}">\n`;
    for (let i = 0; i < 100_000; i++)
      body += `<sitemap><loc>https://example.com/s/${i}.xml</loc></sitemap>\n`;
    body += '</sitemapindex>\n';
    const doc = await parse(body);
    expect(doc.sitemap.type).toBe('IndexXMLSitemap');
    expect(doc.children).toHaveLength(50_000);
    expect(doc.children[49_999].url).toBe('https://example.com/s/49999.xml');
    expect(codes(doc)).toContain('limit');
    expect(doc.truncated).toBe(true);
  });
});

describe('hostile documents: encodings and bytes', () => {
  it('skips a URL holding invalid UTF-8 with an encoding warning and keeps reading', async () => {
    const bytes = Buffer.concat([
      enc.encode(urlset(urlEntries(0, 2)).replace('</urlset>\n', '<url><loc>https://example.com/')),
      Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xe2, 0x82]),
      enc.encode(`</loc></url>${urlEntries(2, 3)}</urlset>`),
    ]);
    const doc = await parse(new Uint8Array(bytes));
    expect(pagesOf(doc)).toEqual(pageUrls(3));
    expect(doc.warnings.map((w) => w.code)).toEqual(['encoding']);
  });

  it('reads UTF-16 with a BOM (LE and BE) and without one', async () => {
    const xml = urlset(urlEntries(0, 3)).replace('UTF-8', 'UTF-16');
    const le = Buffer.from(xml, 'utf16le');
    const be = Buffer.from(le).swap16();
    for (const bytes of [
      Buffer.concat([Buffer.from([0xff, 0xfe]), le]),
      Buffer.concat([Buffer.from([0xfe, 0xff]), be]),
      le,
      be,
    ]) {
      const doc = await parse(new Uint8Array(bytes));
      expect(pagesOf(doc)).toEqual(pageUrls(3));
      expect(doc.encoding).toMatch(/^utf-16/);
    }
  });

  it('ignores an encoding declaration that lies, with a warning', async () => {
    const utf16Claim = urlset('<url><loc>https://example.com/caf\u00e9</loc></url>\n').replace(
      'UTF-8',
      'UTF-16',
    );
    const a = await parse(enc.encode(utf16Claim));
    expect(pagesOf(a).map((u) => decodeURI(u))).toEqual(['https://example.com/café']);
    expect(codes(a)).toContain('encoding');
    const unknown = await parse(enc.encode(urlset(urlEntries(0, 1)).replace('UTF-8', 'x-made-up')));
    expect(pagesOf(unknown)).toEqual(pageUrls(1));
    expect(codes(unknown)).toContain('encoding');
  });

  it('survives NUL bytes anywhere', async () => {
    const xml = urlset(
      `${urlEntries(0, 2)}\0<url><loc>https://example.com/\0nul</loc></url>\n\0${urlEntries(2, 3)}`,
    );
    const doc = await parse(enc.encode(xml));
    expect(pagesOf(doc).slice(0, 2)).toEqual(pageUrls(2));
    expect(pagesOf(doc)).toContain('https://example.com/p/2');
    const nuls = await parse(new Uint8Array(4096));
    expect(nuls.sitemap.type).toBe('PagesTextSitemap');
    expect(pagesOf(nuls)).toEqual([]);
  });

  it('turns HTML served as a sitemap into an InvalidSitemap with a reason', async () => {
    const withDoctype = await parse(
      '<!DOCTYPE html>\n<html><head><title>Not found</title></head><body>Oops</body></html>',
    );
    expect((withDoctype.sitemap as InvalidSitemap).reason).toMatch(
      /^No parsers support sitemap from .*DOCTYPE/,
    );
    const bare = await parse('<html><body><a href="/x">x</a></body></html>');
    expect((bare.sitemap as InvalidSitemap).reason).toBe(
      `No parsers support sitemap from ${URL}: unsupported root element <html>`,
    );
    const xhtml = await parse('<html xmlns="http://www.w3.org/1999/xhtml"><body/></html>');
    expect((xhtml.sitemap as InvalidSitemap).reason).toMatch(
      /unsupported root element <html> in namespace http:\/\/www\.w3\.org\/1999\/xhtml$/,
    );
  });
});
