import { createHash } from 'node:crypto';
import { startTestServer, type TestServer } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryPageStore, type PageStore } from '../src/contract/page-store.js';
import { createRegistry } from '../src/contract/registry.js';
import { InvalidSitemap } from '../src/contract/sitemap.js';
import { headerLookup, type WebClient, type WebResponse } from '../src/contract/web-client.js';
import type { DocumentToParse } from '../src/walk/document-response.js';
import type { TreeOptions } from '../src/walk/options.js';
import type { WalkedDocument } from '../src/walk/revisit.js';
import { sitemapTreeForHomepageWithClient } from '../src/walk/tree.js';
import { tinyIndex, tinyRobots, tinyText, tinyUrlset, urlsetXml } from './tiny-formats.js';

// The walk's per-document facts (`WalkedDocument.response`, `.stored`) and `beforeParse`, over a
// real HTTP server. Core has no HTTP client of its own: the test's is Node's fetch, in the
// WebClient shape (conditional headers, 304, redirects), which is all the walk sees.

const registry = createRegistry([tinyUrlset(), tinyIndex(), tinyRobots(), tinyText()]);

function fetchClient(): WebClient {
  return {
    async get(url, options = {}): Promise<WebResponse> {
      const headers: Record<string, string> = {};
      if (options.ifNoneMatch !== undefined) headers['if-none-match'] = options.ifNoneMatch;
      if (options.ifModifiedSince !== undefined) headers['if-modified-since'] = options.ifModifiedSince;
      let res: Response;
      try {
        res = await fetch(url, { headers, signal: options.signal });
      } catch (error) {
        if (options.signal?.aborted) throw error;
        return {
          kind: 'error',
          url,
          status: null,
          message: String(error),
          code: 'connection',
          retryable: false,
        };
      }
      const lookup = headerLookup(res.headers);
      if (res.status === 304) return { kind: 'not-modified', url: res.url, headers: lookup };
      if (res.status >= 400) {
        await res.body?.cancel();
        const message = `${res.status} ${res.statusText}`;
        return {
          kind: 'error',
          url: res.url,
          status: res.status,
          message,
          code: 'http-status',
          retryable: false,
        };
      }
      const body = res.body as ReadableStream<Uint8Array>;
      return {
        kind: 'ok',
        status: res.status,
        statusText: res.statusText,
        url: res.url,
        headers: lookup,
        body: body as unknown as AsyncIterable<Uint8Array>,
        cancel: () => void body.cancel().catch(() => {}),
      };
    },
  };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const hashBody = () => {
  const h = createHash('sha256');
  return { update: (c: Uint8Array) => void h.update(c), digest: () => h.digest('hex') };
};

/** A robots.txt listing `paths` on the server's own origin. */
function robots(...paths: string[]) {
  return (req: { headers: { host?: string } }, res: { end(body: string): void }) =>
    res.end(paths.map((p) => `Sitemap: http://${req.headers.host}${p}\n`).join(''));
}

let server: TestServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function walk(routes: Parameters<typeof startTestServer>[0], extra: Partial<TreeOptions> = {}) {
  server = await startTestServer(routes);
  const origin = server.origin;
  const docs = new Map<string, WalkedDocument>();
  const tree = await sitemapTreeForHomepageWithClient(`${origin}/`, {
    webClient: fetchClient(),
    registry,
    useKnownPaths: false,
    onDocument: (d) => docs.set(d.requestedUrl.slice(origin.length), d),
    ...extra,
  });
  return { tree, docs, origin };
}

describe('WalkedDocument.response', () => {
  it('reports status, validators, bytes, time, body hash and the stored pages of each document', async () => {
    let origin = '';
    const pages = () => urlsetXml([`${origin}/p1`, `${origin}/p2`, `${origin}/p3`]);
    const { docs } = await walk(
      {
        '/robots.txt': robots('/pages.xml', '/old.xml', '/gone.xml'),
        '/pages.xml': (_req, res) => {
          res.writeHead(200, { etag: '"v7"', 'last-modified': 'Tue, 03 Mar 2026 10:00:00 GMT' });
          res.end(pages());
        },
        '/old.xml': { status: 301, headers: { location: '/pages.xml?again' } },
      },
      {
        hashBody,
        beforeParse: (d) => {
          origin = new URL(d.finalUrl).origin;
        },
      },
    );
    const doc = docs.get('/pages.xml');
    expect(doc?.response).toMatchObject({
      status: 200,
      etag: '"v7"',
      lastModified: 'Tue, 03 Mar 2026 10:00:00 GMT',
      bytes: Buffer.byteLength(pages()),
      bodyHash: sha256(pages()),
    });
    expect(doc?.response?.ms).toBeGreaterThan(0);
    expect(doc?.stored?.count).toBe(3);
    expect(docs.get('/robots.txt')?.stored?.count).toBe(0);
    // A redirect is reported under the URL requested, with the final answer's facts.
    expect(docs.get('/old.xml')?.response?.status).toBe(200);
    const gone = docs.get('/gone.xml');
    expect(gone?.response).toMatchObject({ status: 404, etag: null, bytes: 0, bodyHash: null });
    expect(gone?.stored).toBeNull();
  });

  it('has no body hash without hashBody, nor for a body read only in part', async () => {
    const big = urlsetXml(Array.from({ length: 50 }, (_, i) => `http://example.com/${i}`));
    const { docs } = await walk({
      '/robots.txt': robots('/big.xml'),
      '/big.xml': { body: big },
    });
    expect(docs.get('/big.xml')?.response).toMatchObject({ status: 200, bodyHash: null });
    const cut = await walk(
      { '/robots.txt': robots('/big.xml'), '/big.xml': { body: big } },
      { hashBody, maxPages: 5 },
    );
    const doc = cut.docs.get('/big.xml');
    expect(doc?.stored?.count).toBe(5);
    expect(doc?.response?.bodyHash).toBeNull();
    expect(cut.docs.get('/robots.txt')?.response?.bodyHash).toBe(sha256(`Sitemap: ${cut.origin}/big.xml\n`));
  });

  it('reports a 304 with its validators, and no answer for a document not requested', async () => {
    const { docs } = await walk(
      {
        '/robots.txt': (req, res) => {
          if (req.headers['if-none-match'] === '"r1"') {
            res.writeHead(304, { etag: '"r1"', 'last-modified': 'Mon, 02 Mar 2026 08:00:00 GMT' });
            res.end();
          } else res.end('');
        },
      },
      {
        revisit: {
          plan: (url) =>
            url.endsWith('/a.xml')
              ? { reuse: { type: 'PagesXMLSitemap', children: [] } }
              : { ifNoneMatch: '"r1"' },
          notModified: (url) => ({
            type: 'IndexRobotsTxtSitemap',
            children: [{ url: url.replace('robots.txt', 'a.xml'), lastModified: null }],
          }),
        },
      },
    );
    const robots = docs.get('/robots.txt');
    expect(robots?.reused).toBe('not-modified');
    expect(robots?.response).toMatchObject({
      status: 304,
      etag: '"r1"',
      lastModified: 'Mon, 02 Mar 2026 08:00:00 GMT',
      bytes: 0,
      bodyHash: null,
    });
    expect(robots?.stored).toBeNull();
    const skipped = docs.get('/a.xml');
    expect(skipped?.reused).toBe('skipped');
    expect(skipped?.response).toBeNull();
    expect(skipped?.stored).toBeNull();
  });

  it('hands back what the page store made of the pages', async () => {
    const tagged: PageStore = {
      open(url) {
        const inner = memoryPageStore().open(url);
        return { append: (p) => inner.append(p), close: () => Object.assign(inner.close(), { tag: url }) };
      },
    };
    const { docs, origin } = await walk(
      { '/robots.txt': robots('/a.xml'), '/a.xml': { body: urlsetXml(['http://example.com/x']) } },
      { pageStore: tagged },
    );
    expect(docs.get('/a.xml')?.stored).toMatchObject({ count: 1, tag: `${origin}/a.xml` });
  });
});

describe('beforeParse', () => {
  it('is awaited before the page store opens for the document, with its URLs and answer', async () => {
    const events: string[] = [];
    const seen: DocumentToParse[] = [];
    const store = memoryPageStore();
    const { docs, origin } = await walk(
      {
        '/robots.txt': robots('/moved.xml', '/missing.xml'),
        '/moved.xml': { status: 302, headers: { location: '/a.xml' } },
        '/a.xml': { headers: { etag: '"e"' }, body: urlsetXml(['http://example.com/x']) },
      },
      {
        async beforeParse(doc) {
          seen.push(doc);
          events.push(`before ${doc.finalUrl}`);
          // Loading takes a turn of the event loop: the walk waits for it.
          await new Promise((r) => setImmediate(r));
          events.push(`loaded ${doc.finalUrl}`);
        },
        pageStore: {
          open(url) {
            events.push(`open ${url}`);
            return store.open(url);
          },
        },
      },
    );
    expect(events).toEqual([
      `before ${origin}/robots.txt`,
      `loaded ${origin}/robots.txt`,
      `open ${origin}/robots.txt`,
      `before ${origin}/a.xml`,
      `loaded ${origin}/a.xml`,
      `open ${origin}/a.xml`,
    ]);
    const moved = seen[1];
    expect(moved).toMatchObject({
      requestedUrl: `${origin}/moved.xml`,
      finalUrl: `${origin}/a.xml`,
      parentUrl: `${origin}/robots.txt`,
      level: 1,
    });
    expect(moved.response).toMatchObject({ status: 200, etag: '"e"' });
    // Not called for a document with no body to parse.
    expect(seen.map((d) => d.requestedUrl)).not.toContain(`${origin}/missing.xml`);
    expect(docs.get('/moved.xml')?.stored?.count).toBe(1);
  });

  it('loses only the document when it rejects, reading none of its body', async () => {
    const { tree, docs, origin } = await walk(
      {
        '/robots.txt': robots('/a.xml', '/b.xml'),
        '/a.xml': { body: urlsetXml(['http://example.com/a']) },
        '/b.xml': { body: urlsetXml(['http://example.com/b']) },
      },
      {
        beforeParse(doc) {
          if (doc.finalUrl.endsWith('/a.xml')) throw new Error('state store down');
        },
      },
    );
    const a = docs.get('/a.xml');
    expect(a?.node).toBeInstanceOf(InvalidSitemap);
    expect((a?.node as InvalidSitemap | undefined)?.reason).toBe(
      `Unable to fetch sitemap from ${origin}/a.xml: state store down`,
    );
    expect(a?.response).toMatchObject({ status: 200, bytes: 0 });
    expect(a?.stored).toBeNull();
    expect([...tree.allPages()].map((p) => p.url)).toEqual(['http://example.com/b']);
  });
});
