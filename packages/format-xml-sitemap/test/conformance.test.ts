import { documentCases, documentView, itMatchesGoldens, parseCase, readCase } from '@usp-ts/conformance';
import { describe, expect, it } from 'vitest';
import { sitemapRegistry } from './registry.js';

// Every document case whose usp golden is a <urlset> or a <sitemapindex> (xml-*, docs-*, gzip-*,
// from-str-*): ours must match it, unless the case is a listed difference (pinned elsewhere).
const registry = sitemapRegistry();
const suite = documentCases((c) => {
  const expected = readCase(c.name).expected;
  return expected.type === 'PagesXMLSitemap' || expected.type === 'IndexXMLSitemap';
});

describe.skipIf(!suite.corpus)('conformance: sitemaps.org document cases', () => {
  it('covers the urlset and sitemapindex cases of the corpus', () => {
    expect(suite.cases.length).toBeGreaterThanOrEqual(35);
  });

  itMatchesGoldens(suite, async (c) => documentView(await parseCase(c, registry)));
});
