import { gzipSync } from 'node:zlib';
import { createRegistry } from '@usp-ts/core';
import { startTestServer, type TestServer } from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  atom,
  clientOptionsFor,
  createDefaultRegistry,
  createWebClient,
  defaultPlugins,
  googleNews,
  InvalidSitemap,
  isIndexSitemap,
  isPagesSitemap,
  LOCAL_DUMMY_URL,
  parseSitemapDocument,
  plainText,
  robotsTxt,
  sitemapFromString,
  sitemapToJSON,
  sitemapTreeForHomepage,
  walkPages,
  xmlSitemap,
} from '../src/index.js';

const NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';
const RSS = `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<item><title>One</title><link>https://example.com/one</link></item></channel></rss>`;

describe('the default registry', () => {
  it('lists every format in detection order: robots.txt, text, XML sitemaps, RSS, Atom', () => {
    expect(defaultPlugins().map((p) => [p.kind, p.name])).toEqual([
      ['text', robotsTxt().name],
      ['text', plainText().name],
      ['xml', xmlSitemap().name],
      ['xml', expect.stringMatching(/rss/i)],
      ['xml', atom().name],
    ]);
    expect(createDefaultRegistry().plugins).toHaveLength(5);
  });

  it('reads RSS with the default registry', async () => {
    const node = await sitemapFromString(RSS);
    expect(node.type).toBe('PagesRSSSitemap');
  });

  it('reports RSS as unsupported in a registry built from core and only some formats', async () => {
    const registry = createRegistry([
      robotsTxt(),
      plainText(),
      xmlSitemap({ extensions: [googleNews()] }),
      atom(),
    ]);
    const node = await sitemapFromString(RSS, { registry });
    expect(node).toBeInstanceOf(InvalidSitemap);
    expect(node.type).toBe('InvalidSitemap');
    expect((node as InvalidSitemap).reason).toMatch(/\brss\b/);
  });
});

describe('sitemapFromString and parseSitemapDocument (usp sitemap_from_str)', () => {
  it('uses usp dummy URL and leaves index children un-fetched', async () => {
    const node = await sitemapFromString(
      `<sitemapindex xmlns="${NS}"><sitemap><loc>https://example.com/a.xml</loc><lastmod>2024-01-02</lastmod></sitemap><sitemap><loc>https://example.com/b.xml</loc></sitemap></sitemapindex>`,
    );
    expect(node.url).toBe(LOCAL_DUMMY_URL);
    expect(sitemapToJSON(node)).toEqual({
      type: 'IndexXMLSitemap',
      url: 'http://usp-local-dummy.local/',
      subSitemaps: [
        {
          type: 'InvalidSitemap',
          url: 'https://example.com/a.xml',
          lastModified: '2024-01-02T00:00:00',
          reason: 'Un-fetched child sitemap',
        },
        { type: 'InvalidSitemap', url: 'https://example.com/b.xml', reason: 'Un-fetched child sitemap' },
      ],
    });
  });

  it('parses robots.txt text as a plain-text sitemap under the dummy URL, as robots.txt under a robots URL', async () => {
    const text = 'User-agent: *\nSitemap: https://example.com/s.xml\n';
    const plain = await sitemapFromString(text);
    expect(plain.type).toBe('PagesTextSitemap');
    const robots = await sitemapFromString(text, { url: 'https://example.com/robots.txt' });
    expect(robots.type).toBe('IndexRobotsTxtSitemap');
    expect(isIndexSitemap(robots) && robots.subSitemaps.map((s) => s.url)).toEqual([
      'https://example.com/s.xml',
    ]);
  });

  it('gives an empty text sitemap for an empty string and an InvalidSitemap for HTML', async () => {
    const empty = await sitemapFromString('');
    expect(empty.type).toBe('PagesTextSitemap');
    expect(isPagesSitemap(empty) && empty.pages).toEqual([]);
    const html = await sitemapFromString('<html><body>hi</body></html>');
    expect(html.type).toBe('InvalidSitemap');
  });

  it('rejects a child naming the document itself as usp recursion check does', async () => {
    const node = await sitemapFromString(
      `<sitemapindex xmlns="${NS}"><sitemap><loc>https://example.com/index.xml</loc></sitemap></sitemapindex>`,
      { url: 'https://example.com/index.xml' },
    );
    const [child] = isIndexSitemap(node) ? node.subSitemaps : [];
    expect(child.type).toBe('InvalidSitemap');
    expect((child as InvalidSitemap).reason).toContain('Recursion detected');
  });

  it('rejects an option it does not know, naming the closest one', async () => {
    await expect(parseSitemapDocument('', { pagestore: null } as never)).rejects.toThrow(
      'Option pagestore: unknown option (did you mean pageStore?)',
    );
  });

  it('takes gzip bytes and byte streams', async () => {
    const xml = `<urlset xmlns="${NS}"><url><loc>https://example.com/p</loc></url></urlset>`;
    const fromBytes = await parseSitemapDocument(gzipSync(xml), { url: 'https://example.com/s' });
    expect(fromBytes.sitemap.type).toBe('PagesXMLSitemap');
    async function* chunks() {
      const bytes = gzipSync(xml);
      for (let i = 0; i < bytes.length; i += 7) yield bytes.subarray(i, i + 7);
    }
    const fromStream = await parseSitemapDocument(chunks(), { url: 'https://example.com/s' });
    expect(isPagesSitemap(fromStream.sitemap) && fromStream.sitemap.pages.map((p) => p.url)).toEqual([
      'https://example.com/p',
    ]);
  });
});

describe('sitemapTreeForHomepage and walkPages with Node defaults', () => {
  let server: TestServer;
  const webClientOptions = { allowPrivateNetworks: true, retries: 1 };

  beforeAll(async () => {
    server = await startTestServer();
    server.route('/robots.txt', {
      headers: { 'Content-Type': 'text/plain' },
      body: `Sitemap: ${server.origin}/a.xml\nSitemap: ${server.origin}/b.xml\n`,
    });
    const urlset = (names: string[]) =>
      `<urlset xmlns="${NS}">${names.map((n) => `<url><loc>${server.origin}/${n}</loc></url>`).join('')}</urlset>`;
    server.route('/a.xml', { headers: { 'Content-Type': 'application/xml' }, body: urlset(['a1', 'a2']) });
    server.route('/b.xml', { headers: { 'Content-Type': 'application/xml' }, body: urlset(['b1']) });
  });

  afterAll(async () => {
    await server.close();
  });

  it('builds the tree with its own client, pages kept in temp files', async () => {
    const tree = await sitemapTreeForHomepage(server.origin, { webClientOptions, useKnownPaths: false });
    expect([...tree.allPages()].map((p) => p.url.replace(server.origin, ''))).toEqual(['/a1', '/a2', '/b1']);
  });

  it('lets a private homepage origin through by default, and only that origin', async () => {
    const tree = await sitemapTreeForHomepage(server.origin, { useKnownPaths: false });
    expect([...tree.allPages()]).toHaveLength(3);
    expect(await clientOptionsFor(`${server.origin}/some/page`)).toEqual({
      allowPrivateOrigins: [server.origin],
    });
    expect(await clientOptionsFor('http://93.184.216.34/')).toEqual({});
    expect(await clientOptionsFor(server.origin, { allowPrivateNetworks: true })).toEqual({
      allowPrivateNetworks: true,
    });
    expect(await clientOptionsFor(server.origin, { allowPrivateHosts: [] })).toEqual({
      allowPrivateHosts: [],
    });
    expect(await clientOptionsFor(server.origin, { allowPrivateOrigins: [] })).toEqual({
      allowPrivateOrigins: [],
    });
  });

  it('leaves a client the caller passed open', async () => {
    const client = createWebClient(webClientOptions);
    try {
      await sitemapTreeForHomepage(server.origin, { webClient: client, useKnownPaths: false });
      const again = await client.get(`${server.origin}/a.xml`);
      expect(again.kind).toBe('ok');
      if (again.kind === 'ok') again.cancel();
    } finally {
      await client.close();
    }
  });

  it('streams pages with their sitemap, and has the tree shape once done', async () => {
    const walk = walkPages(server.origin, { webClientOptions, useKnownPaths: false });
    expect(walk.tree).toBeNull();
    const seen: [string, string][] = [];
    for await (const { page, sitemap } of walk) seen.push([sitemap.url, page.url]);
    expect(seen.sort()).toEqual(
      [
        [`${server.origin}/a.xml`, `${server.origin}/a1`],
        [`${server.origin}/a.xml`, `${server.origin}/a2`],
        [`${server.origin}/b.xml`, `${server.origin}/b1`],
      ].sort(),
    );
    expect(walk.stats.pages).toBe(3);
    expect(walk.tree?.type).toBe('IndexWebsiteSitemap');
  });

  it('stops when the consumer breaks out', async () => {
    const walk = walkPages(server.origin, { webClientOptions, useKnownPaths: false, concurrency: 1 });
    let n = 0;
    for await (const _ of walk) {
      n++;
      break;
    }
    expect(n).toBe(1);
  });
});

describe('parse workers (the default on two or more cores)', () => {
  // The compiled entry point: the worker script exists only in dist/.
  let server: TestServer;
  let dist: typeof import('../src/index.js');
  const webClientOptions = { allowPrivateNetworks: true, retries: 1 };
  const names = ['s1', 's2', 's3', 's4'];

  beforeAll(async () => {
    dist = (await import(new URL('../dist/index.js', import.meta.url).href)) as typeof dist;
    server = await startTestServer();
    server.route('/robots.txt', {
      headers: { 'Content-Type': 'text/plain' },
      body: names.map((n) => `Sitemap: ${server.origin}/${n}.xml\n`).join(''),
    });
    for (const n of names) {
      // Well above the 64 KiB below which documents are parsed in-thread.
      let body = `<urlset xmlns="${NS}">`;
      for (let i = 0; i < 2000; i++) {
        body += `<url><loc>${server.origin}/${n}/page-${i}</loc><lastmod>2024-05-0${1 + (i % 9)}</lastmod></url>`;
      }
      server.route(`/${n}.xml`, { headers: { 'Content-Type': 'application/xml' }, body: `${body}</urlset>` });
    }
  });

  afterAll(async () => {
    await server.close();
  });

  const workerCount = () =>
    ((process.report?.getReport() as { workers?: unknown[] } | undefined)?.workers ?? []).length;

  it('parses a second large document on a worker, with the same tree as parsing in-thread', async () => {
    const base = workerCount();
    const walk = dist.walkPages(server.origin, {
      webClientOptions,
      useKnownPaths: false,
      parseWorkers: 1,
      bufferPages: 10,
    });
    const seen: string[] = [];
    let sawWorker = false;
    for await (const { page, sitemap } of walk) {
      if (seen.length === 0) {
        // The consumer holds the first page: the first document waits in this thread, so the
        // next large one in flight goes to a worker.
        await vi.waitFor(() => expect(workerCount()).toBeGreaterThan(base), { timeout: 10_000 });
        sawWorker = true;
      }
      seen.push(`${sitemap.url} ${page.url} ${page.lastModified?.toSourceString()}`);
    }
    expect(sawWorker).toBe(true);
    const inThread: string[] = [];
    for await (const { page, sitemap } of dist.walkPages(server.origin, {
      webClientOptions,
      useKnownPaths: false,
      parseWorkers: 0,
    })) {
      inThread.push(`${sitemap.url} ${page.url} ${page.lastModified?.toSourceString()}`);
    }
    expect(seen).toHaveLength(8000);
    expect(seen.sort()).toEqual(inThread.sort());
    // The walk closed its pool: no worker outlives it.
    await vi.waitFor(() => expect(workerCount()).toBe(base), { timeout: 10_000 });
  });

  it('gives the same tree with and without workers', async () => {
    const a = await dist.sitemapTreeForHomepage(server.origin, { webClientOptions, useKnownPaths: false });
    const b = await dist.sitemapTreeForHomepage(server.origin, {
      webClientOptions,
      useKnownPaths: false,
      parseWorkers: 0,
    });
    expect(dist.sitemapToJSON(a)).toEqual(dist.sitemapToJSON(b));
  });

  it('checks parseWorkers', async () => {
    const walk = dist.walkPages(server.origin, { webClientOptions, parseWorkers: -1 });
    await expect(walk.next()).rejects.toBeInstanceOf(dist.InvalidOptionError);
    await expect(
      dist.sitemapTreeForHomepage(server.origin, { webClientOptions, parseWorkers: 1.5 }),
    ).rejects.toBeInstanceOf(dist.InvalidOptionError);
  });
});
