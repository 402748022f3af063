import {
  compareToGolden,
  documentView,
  formatDifferences,
  hasCorpus,
  loadCases,
  loadDifferences,
  missingCorpusMessage,
  readCase,
} from '@usp-ts/conformance';
import { describe, expect, it } from 'vitest';
import { parse } from './registry.js';

// Every document case whose usp golden is a <urlset> or a <sitemapindex> (xml-*, docs-*, gzip-*,
// from-str-*): ours must match it, unless the case is a listed difference (pinned elsewhere).
const corpus = hasCorpus();
if (!corpus) console.warn(missingCorpusMessage());

const cases = corpus
  ? loadCases({ kind: 'document' }).filter((c) => {
      const expected = readCase(c.name).expected;
      return expected.type === 'PagesXMLSitemap' || expected.type === 'IndexXMLSitemap';
    })
  : [];
const differences = corpus ? loadDifferences() : {};

describe.skipIf(!corpus)('conformance: sitemaps.org document cases', () => {
  it('covers the urlset and sitemapindex cases of the corpus', () => {
    expect(cases.length).toBeGreaterThanOrEqual(35);
  });

  for (const info of cases) {
    const differs = info.name in differences;
    it.skipIf(differs)(info.name, async () => {
      const c = readCase(info.name);
      const parsed = await parse(c.input!, { url: c.meta.url!, headers: c.meta.headers });
      const result = compareToGolden(documentView(parsed), c.expected, {
        ignoreDates: c.meta.depends_on_current_date === true,
        expectedAlternates: c.expectedAlternates,
      });
      expect(result.ok, formatDifferences(result)).toBe(true);
    });
  }
});
