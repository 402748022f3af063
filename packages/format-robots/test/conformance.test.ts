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

// The robots.txt document cases: every robots-* case whose URL is a robots.txt (the one at
// another URL is a plain-text case, run by format-text) and the docs example. Ours must match
// usp's golden unless the case is a listed difference (pinned in differences.test.ts).
const corpus = hasCorpus();
if (!corpus) console.warn(missingCorpusMessage());

const cases = corpus
  ? loadCases({ kind: 'document' }).filter(
      (c) =>
        (c.name.startsWith('robots-') || c.name === 'docs-robots-sitemap-key-case') &&
        (c.meta.url ?? '').endsWith('/robots.txt'),
    )
  : [];
const differences = corpus ? loadDifferences() : {};

describe.skipIf(!corpus)('conformance: robots.txt document cases', () => {
  it('covers the robots.txt cases of the corpus', () => {
    expect(cases.map((c) => c.name).sort()).toEqual([
      'docs-robots-sitemap-key-case',
      'robots-directive-edge-cases',
      'robots-no-sitemap-lines',
      'robots-sitemap-and-site-map-keys',
      'robots-url-with-html-body',
      'robots-utf8-bom',
      'robots-weird-spacing',
    ]);
  });

  for (const info of cases) {
    it.skipIf(info.name in differences)(info.name, async () => {
      const c = readCase(info.name);
      const parsed = await parse(c.input!, { url: c.meta.url!, headers: c.meta.headers });
      const result = compareToGolden(documentView(parsed), c.expected);
      expect(result.ok, formatDifferences(result)).toBe(true);
    });
  }
});
