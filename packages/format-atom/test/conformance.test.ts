import {
  type CorpusNode,
  compareToGolden,
  documentCases,
  documentView,
  formatDifferences,
  itMatchesGoldens,
  parseCase,
  readCase,
} from '@usp-ts/conformance';
import { createRegistry } from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { atom } from '../src/index.js';

const registry = createRegistry([atom()]);
const suite = documentCases((i) => readCase(i.name).expected.type === 'PagesAtomSitemap');

describe.skipIf(!suite.corpus)('conformance: Atom document cases', () => {
  it('covers the Atom cases of the corpus', () => {
    expect(suite.cases.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        'atom03-feed',
        'atom03-empty',
        'atom10-feed',
        'atom10-empty',
        'docs-atom0.3',
        'docs-atom1.0',
      ]),
    );
  });

  itMatchesGoldens(suite, async (c) => documentView(await parseCase(c, registry)));

  it("differs from usp on 'atom-link-and-date-selection' only in the link chosen", async () => {
    expect(suite.differences['atom-link-and-date-selection']).toBeDefined();
    const c = readCase('atom-link-and-date-selection');
    const ours = documentView(await parseCase(c, registry));
    expect(compareToGolden(ours, c.expected).ok).toBe(false);
    // usp: http://example.com/1/edit, /2/self, /3/no-rel, /4 (rel="SELF" overriding an enclosure).
    expect(ours.pages?.slice(0, 4).map((p) => p.url)).toEqual([
      'http://example.com/1',
      'http://example.com/2',
      'http://example.com/3',
      'http://example.com/4.mp3',
    ]);
    // With usp's links swapped for ours, everything else (titles, dates, drops, de-duplication) matches.
    const golden = structuredClone(c.expected) as CorpusNode;
    golden.pages?.slice(0, 4).forEach((p, i) => {
      p.url = ours.pages![i].url;
    });
    const rest = compareToGolden(ours, golden);
    expect(rest.ok, formatDifferences(rest)).toBe(true);
  });
});
