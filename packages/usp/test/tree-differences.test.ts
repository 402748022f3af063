import {
  compareToGolden,
  formatDifferences,
  hasCorpus,
  readCase,
  withPortPlaceholder,
} from '@usp-ts/conformance';
import { describe, expect, it } from 'vitest';
import { runSiteCase } from './site-cases.js';

// Site cases where the tree deliberately differs from usp 1.8.1 (listed in
// conformance-differences.json): what we do instead, asserted.

describe.skipIf(!hasCorpus())('tree: deliberate differences from usp', () => {
  it("'site-robots-redirect-to-non-robots-path': an empty text sitemap from the robots.txt probe is a soft 404", async () => {
    const name = 'site-robots-redirect-to-non-robots-path';
    const run = await runSiteCase(name);
    const tree = withPortPlaceholder(run.json, run.port);
    // usp keeps `PagesTextSitemap /robots-moved.txt` with 0 pages; we drop it and say why.
    expect(tree.subSitemaps?.map((s) => [s.type, s.url])).toEqual([
      ['PagesXMLSitemap', 'http://127.0.0.1:PORT/sitemap.xml'],
    ]);
    const soft = run.warnings.filter((w) => w.code === 'soft-404');
    expect(soft.map((w) => withPortPlaceholder(w.url, run.port))).toEqual([
      'http://127.0.0.1:PORT/robots-moved.txt',
    ]);
    // With soft-404 detection off, the tree is usp's.
    const asUsp = await runSiteCase(name, { dropSoft404: false });
    const c = readCase(name);
    const result = compareToGolden(asUsp.json, c.expected, { siteCase: true, port: asUsp.port });
    expect(result.ok, formatDifferences(result)).toBe(true);
  });

  it("'site-known-paths-multiple-hits': each sitemap is fetched once per walk, a repeat is a reference", async () => {
    const name = 'site-known-paths-multiple-hits';
    const run = await runSiteCase(name);
    const tree = withPortPlaceholder(run.json, run.port);
    // usp fetches /sitemap.xml twice (a known path, then a child of the /sitemap index) and lists
    // its pages twice; we fetch it once and the index's child names the first fetch.
    expect(run.requests.filter((r) => r.startsWith('GET /sitemap.xml ')).length).toBe(1);
    const index = tree.subSitemaps?.find((s) => s.url === 'http://127.0.0.1:PORT/sitemap');
    expect(index?.type).toBe('IndexXMLSitemap');
    expect(index?.subSitemaps?.map((s) => [s.type, s.reason])).toEqual([
      [
        'InvalidSitemap',
        'Sitemap http://127.0.0.1:PORT/sitemap.xml was fetched already in this walk, first listed by http://127.0.0.1:PORT/; not fetched again',
      ],
    ]);
    const urls = JSON.stringify(tree).match(/from-sitemap\.xml\.html/g) ?? [];
    expect(urls).toHaveLength(1);
    expect(run.warnings.filter((w) => w.code === 'duplicate-sitemap')).toHaveLength(1);
  });
});
