import { documentCases, documentView, itMatchesGoldens, parseCase } from '@usp-ts/conformance';
import { createRegistry } from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { robotsTxt } from '../src/index.js';

// The robots.txt document cases: every robots-* case whose URL is a robots.txt (the one at
// another URL is a plain-text case, run by format-text) and the docs example. Ours must match
// usp's golden unless the case is a listed difference (pinned in differences.test.ts).
const registry = createRegistry([robotsTxt()]);
const suite = documentCases(
  (c) =>
    (c.name.startsWith('robots-') || c.name === 'docs-robots-sitemap-key-case') &&
    (c.meta.url ?? '').endsWith('/robots.txt'),
);

describe.skipIf(!suite.corpus)('conformance: robots.txt document cases', () => {
  it('covers the robots.txt cases of the corpus', () => {
    expect(suite.cases.map((c) => c.name).sort()).toEqual([
      'docs-robots-sitemap-key-case',
      'robots-directive-edge-cases',
      'robots-no-sitemap-lines',
      'robots-sitemap-and-site-map-keys',
      'robots-url-with-html-body',
      'robots-utf8-bom',
      'robots-weird-spacing',
    ]);
  });

  itMatchesGoldens(suite, async (c) => documentView(await parseCase(c, registry)));
});
