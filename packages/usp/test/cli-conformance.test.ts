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
import { runCli } from './cli-helpers.js';

// Every document case of the corpus through the CLI: `usp parse -f json --url <case url>`, with
// the case's headers, compared with usp's golden as the format packages' own suites do.

const corpus = hasCorpus();
if (!corpus) console.warn(missingCorpusMessage());
const cases = corpus ? loadCases({ kind: 'document' }) : [];
const differences = corpus ? loadDifferences() : {};

describe.skipIf(!corpus)('conformance: document cases through usp parse -f json', () => {
  it('covers every document case', () => {
    expect(cases.length).toBeGreaterThanOrEqual(60);
  });

  describe.concurrent('cases', () => {
    for (const info of cases) {
      it.skipIf(info.name in differences)(info.name, async () => {
        const c = readCase(info.name);
        const args = ['parse', '-f', 'json', '--url', c.meta.url as string];
        for (const [name, value] of Object.entries((c.meta.headers ?? {}) as Record<string, string>)) {
          args.push('-H', `${name}: ${value}`);
        }
        args.push('-');
        const r = await runCli(args, { input: c.input ?? new Uint8Array() });
        // `usp parse` exits 1 for a document that is not a sitemap, its output printed all the same.
        const golden = c.expected as { type: string; pages?: unknown[] };
        const notASitemap =
          golden.type === 'InvalidSitemap' ||
          (golden.type === 'PagesTextSitemap' && golden.pages?.length === 0);
        expect(r.code, r.stderr).toBe(notASitemap ? 1 : 0);
        const result = compareToGolden(JSON.parse(r.stdout), c.expected, {
          ignoreDates: c.meta.depends_on_current_date,
        });
        expect(result.ok, formatDifferences(result)).toBe(true);
      });
    }
  });
});
