import {
  headerLookup,
  type ParsedSitemap,
  parseSitemap,
  type Registry,
  type SitemapJSON,
} from '@usp-ts/core';
import { expect, it } from 'vitest';
import { type CompareResult, compareToGolden, formatDifferences } from './compare.js';
import {
  type CaseInfo,
  type ConformanceCase,
  hasCorpus,
  loadCases,
  loadDifferences,
  missingCorpusMessage,
  readCase,
} from './corpus.js';
import type { CorpusNode } from './corpus-form.js';

/** The document cases one suite runs. */
export interface DocumentCases {
  /** Whether the corpus is there: suites skip when it is not. */
  corpus: boolean;
  /** The selected document cases, sorted by name; none without the corpus. */
  cases: CaseInfo[];
  /** `conformance-differences.json`: cases we deliberately parse otherwise, pinned by their own tests. */
  differences: Record<string, string>;
}

/**
 * The corpus's document cases that `select` keeps (all of them without it). Without the corpus
 * it prints why the suite skips, so that a skipped suite is never silent.
 */
export function documentCases(select?: (info: CaseInfo) => boolean): DocumentCases {
  const corpus = hasCorpus();
  if (!corpus) {
    console.warn(missingCorpusMessage());
    return { corpus, cases: [], differences: {} };
  }
  const cases = loadCases({ kind: 'document' });
  return {
    corpus,
    cases: select === undefined ? cases : cases.filter(select),
    differences: loadDifferences(),
  };
}

/**
 * Parses a document case as usp's `SitemapFetcher` was given it: the case's URL and response
 * headers, and its raw bytes unless `body` says otherwise.
 */
export function parseCase(
  c: ConformanceCase,
  registry: Registry,
  body: string | Uint8Array = c.input ?? new Uint8Array(),
): Promise<ParsedSitemap> {
  if (c.meta.url === undefined) throw new Error(`conformance case ${c.name} is not a document case`);
  return parseSitemap({ url: c.meta.url, body, registry, headers: headerLookup(c.meta.headers) });
}

/**
 * `compareToGolden` with what the case says about itself: dates are skipped where the golden
 * depends on the day usp ran, and alternates are compared where the case has a golden for them.
 */
export function compareCase(actual: SitemapJSON | CorpusNode, c: ConformanceCase): CompareResult {
  return compareToGolden(actual, c.expected, {
    ignoreDates: c.meta.depends_on_current_date === true,
    expectedAlternates: c.expectedAlternates,
  });
}

/**
 * Declares one vitest test per case: the tree `tree` makes of the case must match usp's golden
 * (`compareCase`). A listed difference must still differ from it (its reason in the name; our
 * behaviour there is pinned by the test that names the case): when we come to match usp, the
 * entry in conformance-differences.json goes.
 */
export function itMatchesGoldens(
  suite: DocumentCases,
  tree: (c: ConformanceCase) => Promise<SitemapJSON | CorpusNode>,
): void {
  for (const info of suite.cases) {
    const reason = suite.differences[info.name];
    const name =
      reason === undefined
        ? info.name
        : `${info.name} differs from usp on purpose (pinned elsewhere): ${reason}`;
    it(name, async () => {
      const c = readCase(info.name);
      const result = compareCase(await tree(c), c);
      // Where usp's golden depends on the day it ran, dates are not compared, and dates are
      // what such a difference is about: everything else must match.
      if (reason === undefined || c.meta.depends_on_current_date === true) {
        expect(result.ok, formatDifferences(result)).toBe(true);
      } else {
        expect(result.ok, `${info.name} now matches usp: drop it from conformance-differences.json`).toBe(
          false,
        );
      }
    });
  }
}
