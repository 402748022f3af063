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

// The plain-text document cases: text-*, the docs example, and robots.txt content served at a
// URL that is not a robots.txt (usp reads it as plain text: no line is a bare URL, 0 pages).
// Ours must match usp's golden unless the case is a listed difference.
const corpus = hasCorpus();
if (!corpus) console.warn(missingCorpusMessage());

const NAMES = new Set(['docs-plaintext', 'robots-content-at-non-robots-url']);
const cases = corpus
  ? loadCases({ kind: 'document' }).filter((c) => c.name.startsWith('text-') || NAMES.has(c.name))
  : [];
const differences = corpus ? loadDifferences() : {};

describe.skipIf(!corpus)('conformance: plain-text document cases', () => {
  it('covers the plain-text cases of the corpus', () => {
    expect(cases.map((c) => c.name).sort()).toEqual([
      'docs-plaintext',
      'robots-content-at-non-robots-url',
      'text-sitemap-blank-lines-and-junk',
      'text-sitemap-gzip-by-content-type',
      'text-sitemap-url-filter-edge-cases',
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
