import {
  compareToGolden,
  formatDifferences,
  hasCorpus,
  loadCases,
  loadDifferences,
  missingCorpusMessage,
  readCase,
} from '@usp-ts/conformance';
import { describe, expect, it } from 'vitest';
import { runSiteCase } from './site-cases.js';

// Every site case of the usp 1.8.1 corpus, served as its README 4.1 says, walked through the
// package's public entry point (undici client, every format, temp-file page store).

const cases = loadCases({ kind: 'site' });

/**
 * Site cases whose request log (expected_requests.json, informative) differs from usp's, and why.
 * Everywhere else we make exactly usp's requests: same probes, retries, redirect hops and re-fetches.
 */
const REQUEST_LOG_DIFFERENCES: Record<string, string> = {
  'site-redirect-loop':
    'the fetcher stops at the first repeated hop of a redirect loop; requests follows it 30 times',
  'site-known-paths-multiple-hits':
    'each sitemap is fetched once per walk: /sitemap.xml, a known path and a child of /sitemap, is requested once',
};

function requestCounts(requests: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of requests) counts[r] = (counts[r] ?? 0) + 1;
  return counts;
}
const differences = loadDifferences();

describe.skipIf(!hasCorpus())('conformance: site cases', () => {
  it('has the corpus', () => {
    expect(cases.length).toBeGreaterThan(30);
  });

  for (const info of cases) {
    const differs = info.name in differences;
    it(`${info.name}${differs ? ' (deliberate difference, pinned below)' : ''}`, async () => {
      const c = readCase(info.name);
      const { json, port, requests } = await runSiteCase(info.name);
      if (c.expectedRequests !== null && !(info.name in REQUEST_LOG_DIFFERENCES)) {
        expect(requestCounts(requests), 'requests made (expected_requests.json)').toEqual(c.expectedRequests);
      }
      const result = compareToGolden(json, c.expected, {
        siteCase: true,
        port,
        ignoreDates: c.meta.depends_on_current_date === true,
        expectedAlternates: c.expectedAlternates,
      });
      if (differs) {
        // Still differs: when we come to match usp, the entry in conformance-differences.json goes.
        expect(result.ok, `${info.name} now matches usp: drop it from conformance-differences.json`).toBe(
          false,
        );
      } else {
        expect(result.ok, formatDifferences(result)).toBe(true);
      }
    });
  }
});

describe.skipIf(hasCorpus())('conformance: site cases (corpus missing)', () => {
  it.skip(missingCorpusMessage(), () => {});
});
