import {
  type IndexRobotsTxtSitemap,
  type IndexXMLSitemap,
  type InvalidSitemap,
  sitemapTreeForHomepageWithClient,
  sitemapTreeForUrlWithClient,
  type Warning,
  walkPagesWithClient,
  walkSitemapPagesWithClient,
} from '@usp-ts/core';
import { OpenedResources } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { robots, sitemapIndex, TEXT, testClient, treeOptions, until, urlset, XML } from './tree-helpers.js';

// Streaming, cancellation and budgets against a real server on 127.0.0.1.

const opened = new OpenedResources();
const client = (extra: Parameters<typeof testClient>[0] = {}) => opened.track(testClient(extra));

afterEach(() => opened.closeAll());

/** A route streaming a urlset of `n` URLs in 64 KiB writes that honour the socket's backpressure. */
function streamingUrlset(o: string, name: string, n: number, state: { written: number; blocked: boolean }) {
  return (_req: unknown, res: import('node:http').ServerResponse) => {
    res.writeHead(200, XML);
    res.write('<?xml version="1.0"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n');
    let i = 0;
    const pump = (): void => {
      while (i < n) {
        let chunk = '';
        while (i < n && chunk.length < 64 * 1024) chunk += `<url><loc>${o}/${name}/${i++}</loc></url>\n`;
        state.written += chunk.length;
        if (!res.write(chunk)) {
          state.blocked = true;
          res.once('drain', () => {
            state.blocked = false;
            pump();
          });
          return;
        }
      }
      res.end('</urlset>\n');
    };
    pump();
  };
}

describe('streaming', () => {
  it('yields every page of every sitemap with the sitemap it came from', async () => {
    const server = await opened.server();
    const o = server.origin;
    server.route('/robots.txt', {
      headers: TEXT,
      body: robots([`${o}/idx.xml`, `${o}/list.txt`, `${o}/feed.rss`, `${o}/feed.atom`]),
    });
    server.route('/feed.rss', {
      headers: XML,
      body: `<rss version="2.0"><channel><title>c</title><item><title>R</title><link>${o}/r1</link></item></channel></rss>`,
    });
    server.route('/feed.atom', {
      headers: XML,
      body: `<feed xmlns="http://www.w3.org/2005/Atom"><title>f</title><entry><title>A</title><link href="${o}/at1"/><updated>2024-01-01T00:00:00Z</updated></entry></feed>`,
    });
    server.route('/idx.xml', { headers: XML, body: sitemapIndex([`${o}/a.xml`, `${o}/b.xml`]) });
    server.route('/a.xml', { headers: XML, body: urlset([`${o}/a1`, `${o}/a2`]) });
    server.route('/b.xml', { headers: XML, body: urlset([`${o}/b1`]) });
    server.route('/list.txt', { headers: TEXT, body: `${o}/t1\n${o}/t2\n` });
    const walk = walkPagesWithClient(o, treeOptions(client(), { useKnownPaths: false }));
    const seen: string[] = [];
    for await (const { page, sitemap } of walk) seen.push(`${sitemap.type} ${sitemap.url} ${page.url}`);
    expect(seen.sort()).toEqual(
      [
        `PagesXMLSitemap ${o}/a.xml ${o}/a1`,
        `PagesXMLSitemap ${o}/a.xml ${o}/a2`,
        `PagesXMLSitemap ${o}/b.xml ${o}/b1`,
        `PagesTextSitemap ${o}/list.txt ${o}/t1`,
        `PagesTextSitemap ${o}/list.txt ${o}/t2`,
        `PagesRSSSitemap ${o}/feed.rss ${o}/r1`,
        `PagesAtomSitemap ${o}/feed.atom ${o}/at1`,
      ].sort(),
    );
    expect(walk.stats).toMatchObject({ pages: 7, sitemapsInFlight: 0, stoppedBy: null });
  });

  it('a consumer that does not pull stops the downloads (the server sees its writes block)', async () => {
    const server = await opened.server();
    const o = server.origin;
    const n = 200_000; // about 9 MB: more than the socket buffers hold
    const first = { written: 0, blocked: false };
    const total = { written: 0, blocked: false };
    server.route('/idx.xml', { headers: XML, body: sitemapIndex([`${o}/big.xml`, `${o}/next.xml`]) });
    server.route('/big.xml', streamingUrlset(o, 'big', n, first));
    server.route('/next.xml', streamingUrlset(o, 'next', 10, total));
    const stream = walkSitemapPagesWithClient(
      `${o}/idx.xml`,
      treeOptions(client(), { concurrency: 1, bufferPages: 100 }),
    );
    const head = await stream.next();
    expect(head.value?.page.url).toBe(`${o}/big/0`);
    await until(() => first.blocked);
    // Give a reader that ignores backpressure every chance to drain the socket.
    await new Promise((r) => setTimeout(r, 200));
    expect(first.blocked).toBe(true);
    const bodyBytes = n * `<url><loc>${o}/big/${n / 2}</loc></url>\n`.length;
    expect(first.written).toBeLessThan(bodyBytes / 2);
    expect(server.requests).not.toContain('GET /next.xml');
    let pages = 1;
    for await (const _ of stream) pages++;
    expect(pages).toBe(n + 10);
  });

  it('breaking out of the loop cancels the walk and leaves no socket open', async () => {
    const server = await opened.server();
    const o = server.origin;
    const state = { written: 0, blocked: false };
    server.route('/idx.xml', {
      headers: XML,
      body: sitemapIndex(Array.from({ length: 20 }, (_, i) => `${o}/c${i}.xml`)),
    });
    for (let i = 0; i < 20; i++) server.route(`/c${i}.xml`, streamingUrlset(o, `c${i}`, 50_000, state));
    const c = client();
    let got = 0;
    for await (const _ of walkSitemapPagesWithClient(`${o}/idx.xml`, treeOptions(c, { concurrency: 2 }))) {
      if (++got === 10) break;
    }
    expect(server.requests.length).toBeLessThanOrEqual(4);
    await c.close();
    await until(() => server.openSockets() === 0);
  });
});

describe('cancellation', () => {
  it('abort stops requests in flight promptly and returns the tree so far', async () => {
    const server = await opened.server();
    const o = server.origin;
    server.route('/robots.txt', {
      headers: TEXT,
      body: robots([`${o}/ok.xml`, `${o}/hang.xml`, `${o}/after.xml`]),
    });
    server.route('/ok.xml', { headers: XML, body: urlset([`${o}/ok`]) });
    let hangClosed = false;
    server.route('/hang.xml', (req) => {
      req.socket.once('close', () => {
        hangClosed = true;
      });
    });
    server.route('/after.xml', () => {});
    const controller = new AbortController();
    const done = sitemapTreeForHomepageWithClient(
      o,
      treeOptions(client(), { signal: controller.signal, useKnownPaths: false, concurrency: 1 }),
    );
    await until(() => server.requests.includes('GET /hang.xml'));
    controller.abort();
    const tree = await done;
    const children = (tree.subSitemaps[0] as IndexRobotsTxtSitemap).subSitemaps;
    expect(children.map((s) => s.type)).toEqual(['PagesXMLSitemap', 'InvalidSitemap', 'InvalidSitemap']);
    expect((children[1] as InvalidSitemap).reason).toMatch(
      /^Unable to fetch sitemap from .*hang\.xml: .*abort/,
    );
    expect((children[2] as InvalidSitemap).reason).toBe('Un-fetched child sitemap: the walk was aborted');
    expect(server.requests).not.toContain('GET /after.xml');
    expect(tree.warnings.map((w) => w.code)).toContain('aborted');
    // The aborted request's connection was closed, not left hanging.
    await until(() => hangClosed);
  });

  it('abort in the middle of a body keeps the pages read so far', async () => {
    const server = await opened.server();
    const o = server.origin;
    const state = { written: 0, blocked: false };
    server.route('/big.xml', streamingUrlset(o, 'big', 200_000, state));
    const controller = new AbortController();
    let pages = 0;
    const done = sitemapTreeForUrlWithClient(
      `${o}/big.xml`,
      treeOptions(client(), {
        signal: controller.signal,
        onProgress: (s) => {
          pages = s.pages;
        },
      }),
    );
    await until(() => pages > 1_000);
    controller.abort();
    const node = await done;
    expect(node.type).toBe('PagesXMLSitemap');
    const n = [...node.allPages()].length;
    expect(n).toBeGreaterThan(1_000);
    expect(n).toBeLessThan(200_000);
  });
});

describe('budgets', () => {
  it('deadline: children that hang do not hold the walk past it', async () => {
    const server = await opened.server();
    const o = server.origin;
    server.route('/idx.xml', {
      headers: XML,
      body: sitemapIndex([`${o}/ok.xml`, ...Array.from({ length: 6 }, (_, i) => `${o}/hang${i}.xml`)]),
    });
    server.route('/ok.xml', { headers: XML, body: urlset([`${o}/ok`]) });
    for (let i = 0; i < 6; i++) server.route(`/hang${i}.xml`, () => {});
    const warnings: Warning[] = [];
    const node = (await sitemapTreeForUrlWithClient(
      `${o}/idx.xml`,
      treeOptions(client(), { deadlineMs: 300, concurrency: 3, onWarning: (w) => warnings.push(w) }),
    )) as IndexXMLSitemap;
    expect(node.subSitemaps[0].type).toBe('PagesXMLSitemap');
    const rest = node.subSitemaps.slice(1) as InvalidSitemap[];
    expect(rest.map((s) => s.type)).toEqual(Array(6).fill('InvalidSitemap'));
    expect(rest.every((s) => s.reason.includes('deadline of 300 ms'))).toBe(true);
    expect(warnings.filter((w) => w.code === 'limit')).toHaveLength(1);
  });

  it('maxSitemaps and maxPages end the walk cleanly and say why', async () => {
    const server = await opened.server();
    const o = server.origin;
    server.route('/idx.xml', {
      headers: XML,
      body: sitemapIndex(Array.from({ length: 8 }, (_, i) => `${o}/c${i}.xml`)),
    });
    for (let i = 0; i < 8; i++) {
      server.route(`/c${i}.xml`, {
        headers: XML,
        body: urlset(Array.from({ length: 10 }, (_, k) => `${o}/${i}/${k}`)),
      });
    }
    const bySitemaps = (await sitemapTreeForUrlWithClient(
      `${o}/idx.xml`,
      treeOptions(client(), { maxSitemaps: 3, concurrency: 1 }),
    )) as IndexXMLSitemap;
    expect(bySitemaps.subSitemaps.map((s) => s.type)).toEqual([
      'PagesXMLSitemap',
      'PagesXMLSitemap',
      ...Array(6).fill('InvalidSitemap'),
    ]);
    expect(bySitemaps.warnings.map((w) => w.message).join()).toContain('limit of 3 sitemaps');

    const byPages = await sitemapTreeForUrlWithClient(
      `${o}/idx.xml`,
      treeOptions(client(), { maxPages: 15, concurrency: 1 }),
    );
    expect([...byPages.allPages()]).toHaveLength(15);
    expect(byPages.warnings.map((w) => w.message).join()).toContain('limit of 15 pages');

    let streamed = 0;
    for await (const _ of walkSitemapPagesWithClient(`${o}/idx.xml`, treeOptions(client(), { maxPages: 25 })))
      streamed++;
    expect(streamed).toBe(25);
  });
});
