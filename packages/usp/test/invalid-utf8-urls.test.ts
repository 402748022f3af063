import { type PagesSitemap, sitemapTreeForHomepageWithClient, type Warning } from '@usp-ts/core';
import { OpenedResources } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { testClient, treeOptions, XML } from './tree-helpers.js';

// Issue 14, items 5 and 9: bytes that are not valid UTF-8 inside a URL used to become U+FFFD
// silently, and the URL was printed or requested as `%EF%BF%BD`. Such a URL is now skipped with
// an `encoding` warning (skipped, not percent-encoded: the README says which).

const opened = new OpenedResources();
afterEach(() => opened.closeAll());

const INVALID = Buffer.from([0xff, 0xfe, 0xc0, 0xaf]);

describe('invalid UTF-8 inside a URL', () => {
  it('skips such a page, image and robots.txt Sitemap: line with an encoding warning, and never requests it', async () => {
    const server = await opened.server();
    const o = server.origin;
    server.route('/robots.txt', {
      headers: { 'Content-Type': 'text/plain' },
      body: Buffer.concat([
        Buffer.from(`User-agent: *\nSitemap: ${o}/`),
        Buffer.from([0xff]),
        Buffer.from(`.xml\nSitemap: ${o}/s.xml\n`),
      ]),
    });
    server.route('/s.xml', {
      headers: XML,
      body: Buffer.concat([
        Buffer.from(
          `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"><url><loc>${o}/`,
        ),
        INVALID,
        Buffer.from(`</loc></url><url><loc>${o}/ok</loc><image:image><image:loc>${o}/`),
        INVALID,
        Buffer.from(
          `.jpg</image:loc></image:image><image:image><image:loc>${o}/i.jpg</image:loc></image:image></url></urlset>`,
        ),
      ]),
    });
    const warnings: Warning[] = [];
    const tree = await sitemapTreeForHomepageWithClient(
      `${o}/`,
      treeOptions(opened.track(testClient()), { useKnownPaths: false, onWarning: (w) => warnings.push(w) }),
    );
    const pages = [...tree.allPages()];
    expect(pages.map((p) => p.url)).toEqual([`${o}/ok`]);
    expect(pages[0].images?.map((i) => i.loc)).toEqual([`${o}/i.jpg`]);
    const encoding = warnings.filter((w) => w.code === 'encoding');
    expect(encoding.map((w) => [w.url, w.message.replace(/: .*$/, '')])).toEqual([
      [
        `${o}/robots.txt`,
        "Child sitemap URL holds bytes that are not valid in the document's encoding (read as U+FFFD), skipped",
      ],
      [
        `${o}/s.xml`,
        "Page URL holds bytes that are not valid in the document's encoding (read as U+FFFD), skipped",
      ],
      [
        `${o}/s.xml`,
        "Image URL holds bytes that are not valid in the document's encoding (read as U+FFFD), skipped",
      ],
    ]);
    expect(server.requests).toEqual(['GET /robots.txt', 'GET /s.xml']);
    const leaf = (tree.subSitemaps[0] as { subSitemaps: PagesSitemap[] }).subSitemaps;
    expect(leaf.map((s) => s.url)).toEqual([`${o}/s.xml`]);
  });
});
