import { documentCases, documentView, itMatchesGoldens, parseCase } from '@usp-ts/conformance';
import { createRegistry } from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { plainText } from '../src/index.js';

// The plain-text document cases: text-*, the docs example, and robots.txt content served at a
// URL that is not a robots.txt (usp reads it as plain text: no line is a bare URL, 0 pages).
// Ours must match usp's golden unless the case is a listed difference.
const registry = createRegistry([plainText()]);
const NAMES = new Set(['docs-plaintext', 'robots-content-at-non-robots-url']);
const suite = documentCases((c) => c.name.startsWith('text-') || NAMES.has(c.name));

describe.skipIf(!suite.corpus)('conformance: plain-text document cases', () => {
  it('covers the plain-text cases of the corpus', () => {
    expect(suite.cases.map((c) => c.name).sort()).toEqual([
      'docs-plaintext',
      'robots-content-at-non-robots-url',
      'text-sitemap-blank-lines-and-junk',
      'text-sitemap-gzip-by-content-type',
      'text-sitemap-url-filter-edge-cases',
    ]);
  });

  itMatchesGoldens(suite, async (c) => documentView(await parseCase(c, registry)));
});
