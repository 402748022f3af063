import { documentCases, itMatchesGoldens } from '@usp-ts/conformance';
import type { SitemapJSON } from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { runCli } from './cli-helpers.js';

// Every document case of the corpus through the CLI: `usp parse -f json --url <case url>`, with
// the case's headers, compared with usp's golden as the format packages' own suites do.

const suite = documentCases();

describe.skipIf(!suite.corpus)('conformance: document cases through usp parse -f json', () => {
  it('covers every document case', () => {
    expect(suite.cases.length).toBeGreaterThanOrEqual(60);
  });

  describe.concurrent('cases', () => {
    itMatchesGoldens(suite, async (c) => {
      const args = ['parse', '-f', 'json', '--url', c.meta.url as string];
      for (const [name, value] of Object.entries(c.meta.headers ?? {})) {
        args.push('-H', `${name}: ${value}`);
      }
      args.push('-');
      const r = await runCli(args, { input: c.input ?? new Uint8Array() });
      // `usp parse` exits 1 for a document that is not a sitemap, its output printed all the same
      // (the output is compared with the golden; a listed difference may be a sitemap where usp's is not).
      const tree = JSON.parse(r.stdout) as SitemapJSON;
      const notASitemap =
        tree.type === 'InvalidSitemap' || (tree.type === 'PagesTextSitemap' && tree.pages?.length === 0);
      expect(r.code, r.stderr).toBe(notASitemap ? 1 : 0);
      return tree;
    });
  });
});
