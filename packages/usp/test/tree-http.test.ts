import { brotliCompressSync, gzipSync } from 'node:zlib';
import {
  type IndexRobotsTxtSitemap,
  type IndexXMLSitemap,
  type InvalidSitemap,
  sitemapTreeForHomepageWithClient,
  sitemapTreeForUrlWithClient,
  type Warning,
} from '@usp-ts/core';
import { OpenedResources, type TestServer } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
import {
  gzip,
  outline,
  robots,
  sitemapIndex,
  TEXT,
  testClient,
  treeOptions,
  until,
  urlset,
  XML,
} from './tree-helpers.js';

// The tree against real HTTP on 127.0.0.1: @usp-ts/fetcher, the default formats, short limits.

const opened = new OpenedResources();
const client = (extra: Parameters<typeof testClient>[0] = {}) => opened.track(testClient(extra));

afterEach(() => opened.closeAll());

const count = (s: TestServer, path: string) => s.requests.filter((r) => r === `GET ${path}`).length;

describe('redirects', () => {
  it('reports a redirected sitemap under its final URL, and a redirect into an ancestor as recursion', async () => {
    const server = await opened.server();
    const o = server.origin;
    server.route('/robots.txt', { headers: TEXT, body: robots([`${o}/old.xml`, `${o}/idx.xml`]) });
    server.route('/old.xml', { status: 301, headers: { Location: '/new.xml' } });
    server.route('/new.xml', { headers: XML, body: urlset([`${o}/a`]) });
    server.route('/idx.xml', { headers: XML, body: sitemapIndex([`${o}/back.xml`, `${o}/new.xml`]) });
    server.route('/back.xml', { status: 302, headers: { Location: `${o}/idx.xml` } });
    // One at a time, so old.xml reaches new.xml before idx.xml names it (see 'fetched once').
    const tree = await sitemapTreeForHomepageWithClient(
      `${o}/`,
      treeOptions(client(), { useKnownPaths: false, concurrency: 1 }),
    );
    expect(outline(tree)).toEqual([
      `IndexWebsiteSitemap ${o}/`,
      `  IndexRobotsTxtSitemap ${o}/robots.txt`,
      `    PagesXMLSitemap ${o}/new.xml (1)`,
      `    IndexXMLSitemap ${o}/idx.xml`,
      `      InvalidSitemap ${o}/back.xml :: Recursion detected when ${o}/back.xml redirected to ${o}/idx.xml with parent URLs {'${o}/idx.xml', '${o}/robots.txt'}.`,
      `      InvalidSitemap ${o}/new.xml :: Sitemap ${o}/new.xml was fetched already in this walk, first listed by ${o}/robots.txt; not fetched again`,
    ]);
    expect(count(server, '/new.xml')).toBe(1);
    expect(count(server, '/idx.xml')).toBe(2);
  });

  it('gives up on a redirect loop with a fetch reason', async () => {
    const server = await opened.server();
    const o = server.origin;
    server.route('/loop.xml', { status: 302, headers: { Location: `${o}/loop.xml` } });
    const node = await sitemapTreeForUrlWithClient(`${o}/loop.xml`, treeOptions(client({ maxRedirects: 3 })));
    expect(node.type).toBe('InvalidSitemap');
    expect((node as InvalidSitemap).reason).toMatch(
      new RegExp(`^Unable to fetch sitemap from ${o}/loop.xml: `),
    );
    // The client stops at its redirect limit, or sooner when it sees the loop.
    expect(count(server, '/loop.xml')).toBeGreaterThanOrEqual(1);
    expect(count(server, '/loop.xml')).toBeLessThanOrEqual(4);
  });
});

describe('compression', () => {
  it('reads gzip by its magic bytes whatever the name and Content-Type say', async () => {
    const server = await opened.server();
    const o = server.origin;
    server.route('/robots.txt', {
      headers: TEXT,
      body: robots([`${o}/packed.xml`, `${o}/plain.xml.gz`, `${o}/typed`]),
    });
    server.route('/packed.xml', {
      headers: { 'Content-Type': 'application/octet-stream' },
      body: gzip(urlset([`${o}/p1`, `${o}/p2`])),
    });
    // Named and typed as gzip, but plain XML: usp falls back to the raw bytes too.
    server.route('/plain.xml.gz', {
      headers: { 'Content-Type': 'application/x-gzip' },
      body: urlset([`${o}/q`]),
    });
    server.route('/typed', { headers: { 'Content-Type': 'text/html' }, body: gzip(urlset([`${o}/r`])) });
    const tree = await sitemapTreeForHomepageWithClient(o, treeOptions(client(), { useKnownPaths: false }));
    expect(outline(tree).slice(2)).toEqual([
      `    PagesXMLSitemap ${o}/packed.xml (2)`,
      `    PagesXMLSitemap ${o}/plain.xml.gz (1)`,
      `    PagesXMLSitemap ${o}/typed (1)`,
    ]);
    expect([...tree.allPages()].map((p) => p.url)).toEqual([`${o}/p1`, `${o}/p2`, `${o}/q`, `${o}/r`]);
  });

  it('undoes Content-Encoding gzip and br, and a gzipped file sent with Content-Encoding gzip', async () => {
    const server = await opened.server();
    const o = server.origin;
    server.route('/robots.txt', {
      headers: TEXT,
      body: robots([`${o}/ce-gzip.xml`, `${o}/ce-br.xml`, `${o}/double.xml.gz`]),
    });
    server.route('/ce-gzip.xml', {
      headers: { ...XML, 'Content-Encoding': 'gzip' },
      body: gzip(urlset([`${o}/g`])),
    });
    server.route('/ce-br.xml', {
      headers: { ...XML, 'Content-Encoding': 'br' },
      body: brotliCompressSync(Buffer.from(urlset([`${o}/b`]))),
    });
    // A .gz file served with Content-Encoding: gzip (a common misconfiguration): gzip twice.
    server.route('/double.xml.gz', {
      headers: { 'Content-Type': 'application/x-gzip', 'Content-Encoding': 'gzip' },
      body: gzipSync(gzip(urlset([`${o}/d`]))),
    });
    const tree = await sitemapTreeForHomepageWithClient(o, treeOptions(client(), { useKnownPaths: false }));
    expect([...tree.allPages()].map((p) => p.url)).toEqual([`${o}/g`, `${o}/b`, `${o}/d`]);
    expect(outline(tree)[4]).toBe(`    PagesXMLSitemap ${o}/double.xml.gz (1)`);
  });
});

describe('HTTP errors', () => {
  it('404 is not retried; 5xx is retried (Retry-After honoured) and recovers, or ends as InvalidSitemap', async () => {
    const server = await opened.server();
    const o = server.origin;
    let flaky = 0;
    server.route('/robots.txt', {
      headers: TEXT,
      body: robots([`${o}/missing.xml`, `${o}/flaky.xml`, `${o}/down.xml`]),
    });
    server.route('/flaky.xml', (_req, res) => {
      if (flaky++ === 0) {
        res.writeHead(503, { 'Retry-After': '0', 'Content-Type': 'text/html' });
        res.end('<h1>busy</h1>');
        return;
      }
      res.writeHead(200, XML);
      res.end(urlset([`${o}/f`]));
    });
    server.route('/down.xml', { status: 500, headers: { 'Content-Type': 'text/html' }, body: 'boom' });
    const warnings: Warning[] = [];
    const tree = await sitemapTreeForHomepageWithClient(
      o,
      treeOptions(client({ retries: 3 }), { useKnownPaths: false, onWarning: (w) => warnings.push(w) }),
    );
    expect(outline(tree).slice(2)).toEqual([
      `    InvalidSitemap ${o}/missing.xml :: Unable to fetch sitemap from ${o}/missing.xml: 404 Not Found`,
      `    PagesXMLSitemap ${o}/flaky.xml (1)`,
      `    InvalidSitemap ${o}/down.xml :: Unable to fetch sitemap from ${o}/down.xml: 500 Internal Server Error`,
    ]);
    expect(count(server, '/missing.xml')).toBe(1);
    expect(count(server, '/flaky.xml')).toBe(2);
    expect(count(server, '/down.xml')).toBe(3);
    expect(warnings.filter((w) => w.code === 'fetch').map((w) => w.url)).toEqual([
      `${o}/missing.xml`,
      `${o}/down.xml`,
    ]);
  });

  it('a server that accepts and never answers times out; the rest of the tree is read', async () => {
    const server = await opened.server();
    const o = server.origin;
    server.route('/robots.txt', { headers: TEXT, body: robots([`${o}/hang.xml`, `${o}/ok.xml`]) });
    server.route('/hang.xml', () => {});
    server.route('/ok.xml', { headers: XML, body: urlset([`${o}/ok`]) });
    const tree = await sitemapTreeForHomepageWithClient(
      o,
      treeOptions(client({ retries: 1, headersTimeoutMs: 150 }), { useKnownPaths: false }),
    );
    const [hang, ok] = (tree.subSitemaps[0] as IndexRobotsTxtSitemap).subSitemaps;
    expect(hang.type).toBe('InvalidSitemap');
    expect((hang as InvalidSitemap).reason).toMatch(
      new RegExp(`^Unable to fetch sitemap from ${o}/hang.xml: .+`),
    );
    expect(ok.type).toBe('PagesXMLSitemap');
  });

  it('a server that drips is cut by the request deadline; pages completed before the cut are kept', async () => {
    const server = await opened.server();
    const o = server.origin;
    server.route('/drip.xml', (_req, res) => {
      res.writeHead(200, XML);
      const doc = urlset([`${o}/d1`, `${o}/d2`, `${o}/d3`]);
      const head = doc.indexOf(`${o}/d3`);
      res.write(doc.slice(0, head));
      let i = head;
      const timer = setInterval(() => {
        if (i < doc.length) res.write(doc[i++]);
      }, 40);
      res.on('close', () => clearInterval(timer));
    });
    const warnings: Warning[] = [];
    const node = await sitemapTreeForUrlWithClient(
      `${o}/drip.xml`,
      treeOptions(client({ retries: 1, requestTimeoutMs: 300, bodyIdleTimeoutMs: 1_000 }), {
        onWarning: (w) => warnings.push(w),
      }),
    );
    expect(node.type).toBe('PagesXMLSitemap');
    expect([...node.allPages()].map((p) => p.url)).toEqual([`${o}/d1`, `${o}/d2`]);
    expect(warnings.length).toBeGreaterThan(0);
  });

  it('a body over the cap is cut on the wire; the pages before the cut are kept', async () => {
    const server = await opened.server();
    const o = server.origin;
    const total = 600_000; // about 30 MB if it were all sent
    let sent = 0;
    server.route('/huge.xml', (_req, res) => {
      res.writeHead(200, XML);
      res.write('<?xml version="1.0"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n');
      let i = 0;
      const pump = (): void => {
        while (i < total && !res.destroyed) {
          let chunk = '';
          while (i < total && chunk.length < 16 * 1024) chunk += `<url><loc>${o}/page/${i++}</loc></url>\n`;
          sent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!res.destroyed) res.end('</urlset>\n');
      };
      pump();
    });
    const warnings: Warning[] = [];
    const node = await sitemapTreeForUrlWithClient(
      `${o}/huge.xml`,
      treeOptions(client({ retries: 1, maxBodyBytes: 20_000 }), { onWarning: (w) => warnings.push(w) }),
    );
    const n = [...node.allPages()].length;
    expect(node.type).toBe('PagesXMLSitemap');
    expect(n).toBeGreaterThan(10);
    expect(n).toBeLessThan(1_000);
    expect(warnings.map((w) => w.code)).toContain('too-large');
    // Stopped on the wire: the server could not push more than the socket buffers hold.
    await until(() => server.openSockets() === 0);
    expect(sent).toBeLessThan(8 * 1024 * 1024);
  });
});

describe('recursion over HTTP', () => {
  it('catches cycles between indexes and stops at depth 12', async () => {
    const server = await opened.server();
    const o = server.origin;
    const list = [`${o}/a.xml`, `${o}/s1.xml`];
    server.route('/robots.txt', { headers: TEXT, body: robots(list) });
    server.route('/a.xml', { headers: XML, body: sitemapIndex([`${o}/b.xml`]) });
    // Same sitemap, spelled differently: caught by the normalised comparison (usp compares strings).
    server.route('/b.xml', {
      headers: XML,
      body: sitemapIndex([`http://127.0.0.1:${server.port}/a.xml#top`]),
    });
    for (let i = 1; i <= 12; i++) {
      server.route(`/s${i}.xml`, { headers: XML, body: sitemapIndex([`${o}/s${i + 1}.xml`]) });
    }
    const tree = await sitemapTreeForHomepageWithClient(o, treeOptions(client(), { useKnownPaths: false }));
    const lines = outline(tree);
    expect(lines[4]).toMatch(
      /^ {8}InvalidSitemap .*\/a\.xml#top :: Unable to add sub-sitemap from URL .*Recursion detected in URL/,
    );
    const deepest = lines[lines.length - 1];
    expect(deepest.trim()).toBe(
      `InvalidSitemap ${o}/s12.xml :: Unable to add sub-sitemap from URL ${o}/s12.xml: Recursion level exceeded 11 for URL ${o}/s12.xml.`,
    );
    expect(count(server, '/s11.xml')).toBe(1);
    expect(count(server, '/s12.xml')).toBe(0);
  });
});

describe('soft 404s', () => {
  it('known paths answering 200 with HTML, an empty body or a URL-less text are not sitemaps', async () => {
    const server = await opened.server();
    const o = server.origin;
    server.route('/sitemap.xml', {
      headers: { 'Content-Type': 'text/html' },
      body: '<!DOCTYPE html><html><body>Not here</body></html>',
    });
    server.route('/sitemap_index.xml', { headers: XML, body: '' });
    server.route('/sitemap', {
      headers: { 'Content-Type': 'text/html; charset=utf-8' },
      body: 'Page not found',
    });
    server.route('/sitemap_news.xml', { headers: XML, body: urlset([`${o}/news`]) });
    const warnings: Warning[] = [];
    const tree = await sitemapTreeForHomepageWithClient(
      o,
      treeOptions(client(), { onWarning: (w) => warnings.push(w) }),
    );
    expect(outline(tree)).toEqual([
      `IndexWebsiteSitemap ${o}/`,
      `  PagesXMLSitemap ${o}/sitemap_news.xml (1)`,
    ]);
    expect(warnings.filter((w) => w.code === 'soft-404').map((w) => w.url)).toEqual([
      `${o}/sitemap_index.xml`,
      `${o}/sitemap`,
    ]);
  });
});

describe('fetch order', () => {
  it('children of an index answering in reverse order stay in document order', async () => {
    const server = await opened.server();
    const o = server.origin;
    const n = 5;
    const answered: boolean[] = Array(n).fill(false);
    server.route('/idx.xml', {
      headers: XML,
      body: sitemapIndex(Array.from({ length: n }, (_, i) => `${o}/c${i}.xml`)),
    });
    const order: number[] = [];
    for (let i = 0; i < n; i++) {
      server.route(`/c${i}.xml`, async (_req, res) => {
        // Child i answers only after child i+1 has: the last one answers first.
        while (i + 1 < n && !answered[i + 1]) await new Promise((r) => setTimeout(r, 2));
        res.writeHead(200, XML);
        res.end(urlset([`${o}/p${i}`]));
        answered[i] = true;
        order.push(i);
      });
    }
    const node = (await sitemapTreeForUrlWithClient(
      `${o}/idx.xml`,
      treeOptions(client(), { concurrency: n }),
    )) as IndexXMLSitemap;
    expect(order).toEqual([4, 3, 2, 1, 0]);
    expect(node.subSitemaps.map((s) => s.url)).toEqual(Array.from({ length: n }, (_, i) => `${o}/c${i}.xml`));
    expect([...node.allPages()].map((p) => p.url)).toEqual(Array.from({ length: n }, (_, i) => `${o}/p${i}`));
  });
});
