import { sitemapTreeForHomepageWithClient, type Warning, walkPagesWithClient } from '@usp-ts/core';
import { OpenedResources } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { robots, sitemapIndex, TEXT, testClient, treeOptions, urlset, XML } from './tree-helpers.js';

// Each sitemap is fetched once per walk (a deliberate difference from usp, which de-duplicates
// ancestors only: see 'site-known-paths-multiple-hits' in conformance-differences.json).

const opened = new OpenedResources();
const client = () => opened.track(testClient());

afterEach(() => opened.closeAll());

describe('each sitemap is fetched once per walk', () => {
  it('an index listing itself, a query-string variant of itself and a leaf twice: the leaf once', async () => {
    const s = await opened.server();
    const o = s.origin;
    const index = sitemapIndex([`${o}/idx.xml`, `${o}/idx.xml?again=1`, `${o}/leaf.xml`, `${o}/leaf.xml`]);
    s.route('/robots.txt', { headers: TEXT, body: robots([`${o}/idx.xml`]) });
    s.route('/idx.xml', { headers: XML, body: index });
    s.route('/leaf.xml', { headers: XML, body: urlset([`${o}/a`, `${o}/b`]) });
    const warnings: Warning[] = [];
    const walk = walkPagesWithClient(
      `${o}/`,
      treeOptions(client(), { useKnownPaths: false, onWarning: (w) => warnings.push(w) }),
    );
    const pages: string[] = [];
    for await (const { page } of walk) pages.push(page.url);
    expect(pages).toEqual([`${o}/a`, `${o}/b`]);
    expect(s.requests.filter((r) => r === 'GET /leaf.xml')).toHaveLength(1);
    const repeats = warnings.filter((w) => w.code === 'duplicate-sitemap');
    // The index's own second <loc> is dropped by the parser; the variant's copy is the repeat.
    expect(repeats).toHaveLength(1);
    expect(repeats[0].message).toBe(
      `Sitemap ${o}/leaf.xml was fetched already in this walk, first listed by ${o}/idx.xml; not fetched again`,
    );
  });

  it('N spellings that redirect to one sitemap: its body is fetched once, its pages emitted once', async () => {
    const s = await opened.server();
    const o = s.origin;
    const variants = Array.from({ length: 8 }, (_, i) => `${o}/v${i}.xml`);
    for (const v of variants)
      s.route(new URL(v).pathname, { status: 301, headers: { Location: '/leaf.xml' } });
    s.route('/robots.txt', { headers: TEXT, body: robots([`${o}/idx.xml`]) });
    s.route('/idx.xml', { headers: XML, body: sitemapIndex(variants) });
    s.route('/leaf.xml', { headers: XML, body: urlset([`${o}/a`]) });
    const tree = await sitemapTreeForHomepageWithClient(
      `${o}/`,
      treeOptions(client(), { useKnownPaths: false }),
    );
    expect([...tree.allPages()].map((p) => p.url)).toEqual([`${o}/a`]);
    // Each redirect hop is one request; the leaf's body is sent at most once per redirect that
    // raced the first, and only one of them is parsed.
    const nodes = [...tree.allSitemaps()].filter((n) => n.type === 'PagesXMLSitemap');
    expect(nodes.map((n) => n.url)).toEqual([`${o}/leaf.xml`]);
  });
});
