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
import { createDefaultRegistry, headerLookup, parseDocument } from '../src/index.js';

// Every document case of the usp 1.8.1 corpus, parsed by core's parseDocument with every format
// this package ships, compared with usp's golden (corpus README sections 2.1 and 3). Cases listed in
// conformance-differences.json are deliberate improvements, pinned by their own tests elsewhere.

const corpus = hasCorpus();
if (!corpus) console.warn(missingCorpusMessage());
const cases = loadCases({ kind: 'document' });
const differences = loadDifferences();
const registry = createDefaultRegistry();

describe.skipIf(!corpus)('conformance: document cases', () => {
  it('has every document case of the corpus', () => {
    expect(cases.length).toBeGreaterThanOrEqual(69);
  });

  for (const info of cases) {
    const reason = differences[info.name];
    it.skipIf(reason !== undefined)(
      reason === undefined ? info.name : `${info.name} (deliberate difference: ${reason})`,
      async () => {
        const c = readCase(info.name);
        // sitemap_from_str hands usp a str: no gzip or byte-level decoding is involved.
        const body = c.meta.via === 'sitemap_from_str' ? new TextDecoder().decode(c.input!) : c.input!;
        const parsed = await parseDocument({
          url: c.meta.url!,
          body,
          registry,
          headers: headerLookup(c.meta.headers),
        });
        const result = compareToGolden(documentView(parsed), c.expected, {
          ignoreDates: c.meta.depends_on_current_date === true,
          expectedAlternates: c.expectedAlternates,
        });
        expect(result.ok, formatDifferences(result)).toBe(true);
      },
    );
  }
});
