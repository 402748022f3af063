import {
  type CorpusNode,
  compareToGolden,
  documentView,
  formatDifferences,
  hasCorpus,
  loadCases,
  loadDifferences,
  missingCorpusMessage,
  readCase,
} from '@usp-ts/conformance';
import { createRegistry, headerLookup, parseDocument } from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { atom } from '../src/index.js';

const corpus = hasCorpus();
if (!corpus) console.warn(missingCorpusMessage());
const registry = createRegistry([atom()]);

async function parseCase(name: string) {
  const c = readCase(name);
  const parsed = await parseDocument({
    url: c.meta.url!,
    body: c.input!,
    registry,
    headers: headerLookup(c.meta.headers),
  });
  return { c, parsed };
}

const cases = corpus
  ? loadCases({ kind: 'document' }).filter((i) => readCase(i.name).expected.type === 'PagesAtomSitemap')
  : [];
const differences = corpus ? loadDifferences() : {};

describe.skipIf(!corpus)('conformance: Atom document cases', () => {
  it('covers the Atom cases of the corpus', () => {
    expect(cases.map((c) => c.name)).toEqual(
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

  for (const info of cases) {
    it.skipIf(info.name in differences)(info.name, async () => {
      const { c, parsed } = await parseCase(info.name);
      const result = compareToGolden(documentView(parsed), c.expected, {
        ignoreDates: c.meta.depends_on_current_date,
      });
      expect(result.ok, formatDifferences(result)).toBe(true);
    });
  }

  it("differs from usp on 'atom-link-and-date-selection' only in the link chosen", async () => {
    expect(differences['atom-link-and-date-selection']).toBeDefined();
    const { c, parsed } = await parseCase('atom-link-and-date-selection');
    const ours = documentView(parsed);
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
