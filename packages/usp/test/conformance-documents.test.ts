import { documentCases, documentView, itMatchesGoldens, parseCase } from '@usp-ts/conformance';
import { describe, expect, it } from 'vitest';
import { createDefaultRegistry } from '../src/index.js';

// Every document case of the usp 1.8.1 corpus, parsed by core's parseDocument with every format
// this package ships, compared with usp's golden (corpus README sections 2.1 and 3). Cases listed in
// conformance-differences.json are deliberate improvements, pinned by their own tests elsewhere.

const suite = documentCases();
const registry = createDefaultRegistry();

describe.skipIf(!suite.corpus)('conformance: document cases', () => {
  it('has every document case of the corpus', () => {
    expect(suite.cases.length).toBeGreaterThanOrEqual(69);
  });

  itMatchesGoldens(suite, async (c) => {
    // sitemap_from_str hands usp a str: no gzip or byte-level decoding is involved.
    const body = c.meta.via === 'sitemap_from_str' ? new TextDecoder().decode(c.input!) : undefined;
    return documentView(await parseCase(c, registry, body));
  });
});
