import { createRegistry } from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { compareToGolden } from '../src/compare.js';
import { hasCorpus, loadDifferences, readCase } from '../src/corpus.js';
import type { CorpusNode } from '../src/corpus-form.js';
import { compareCase, documentCases, parseCase } from '../src/document-suite.js';

describe.skipIf(!hasCorpus())('document-case suites', () => {
  it('documentCases gives the document cases select keeps, and the listed differences', () => {
    const all = documentCases();
    expect(all.corpus).toBe(true);
    expect(all.cases.length).toBeGreaterThan(0);
    expect(all.cases.every((c) => c.meta.kind === 'document')).toBe(true);
    expect(all.differences).toEqual(loadDifferences());
    const docs = documentCases((c) => c.name.startsWith('docs-'));
    expect(docs.cases.map((c) => c.name)).toEqual(
      all.cases.filter((c) => c.name.startsWith('docs-')).map((c) => c.name),
    );
  });

  it('parseCase parses the case at its URL', async () => {
    const c = readCase('docs-plaintext');
    const parsed = await parseCase(c, createRegistry([]));
    expect(parsed.sitemap.url).toBe(c.meta.url);
    expect(parsed.bytes).toBe(c.input?.length);
  });

  it('compareCase compares the alternates the case has a golden for', () => {
    const c = readCase('docs-hreflang');
    // expected.json has no alternates: a tree without any matches it, but not the case.
    expect(compareToGolden(c.expected, c.expected).ok).toBe(true);
    expect(compareCase(c.expected, c).ok).toBe(false);
  });

  it('compareCase leaves out dates where the golden depends on the day usp ran', () => {
    const c = readCase('xml-lastmod-partial-dates');
    const otherDay = structuredClone(c.expected) as CorpusNode;
    for (const p of otherDay.pages ?? []) p.last_modified = '2000-01-01T00:00:00';
    expect(compareToGolden(otherDay, c.expected).ok).toBe(false);
    expect(compareCase(otherDay, c).ok).toBe(true);
  });
});
