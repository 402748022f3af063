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
});
