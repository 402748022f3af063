import { documentView, hasCorpus, readCase, toCorpusForm } from '@usp-ts/conformance';
import { describe, expect, it } from 'vitest';
import { parse } from './registry.js';

// Where we deliberately do better than usp 1.8.1 on a robots.txt case of the corpus
// (listed in conformance-differences.json), with our result spelled out.
const corpus = hasCorpus();

describe.skipIf(!corpus)('differences from usp on the corpus inputs', () => {
  it("'robots-directive-edge-cases': a space before the colon, a trailing comment and a relative value no longer lose the Sitemap line", async () => {
    const c = readCase('robots-directive-edge-cases');
    const parsed = await parse(c.input!, { url: c.meta.url! });
    const tree = toCorpusForm(documentView(parsed));
    const ours = (tree.sub_sitemaps ?? []).map((s) => s.url);
    const usp = (c.expected.sub_sitemaps ?? []).map((s) => s.url);
    // Everything usp finds, in its order, plus the three lines it drops, where they stand.
    const extra = [
      'http://example.com/not-3-space-before-colon.xml',
      'http://example.com/not-5-relative.xml',
      'http://example.com/not-7-trailing-comment.xml',
    ];
    expect(ours).toEqual([...usp.slice(0, 6), ...extra, ...usp.slice(6)]);
    expect((tree.sub_sitemaps ?? []).every((s) => s.reason === 'Un-fetched child sitemap')).toBe(true);
    // Still dropped, as by usp: plural key, space inside the key, commented line, ftp, one-letter host, mid-line.
    for (const dropped of ['not-1', 'not-2', 'not-4', 'not-6', 'http://x', 'not-8']) {
      expect(ours.some((u) => u.includes(dropped))).toBe(false);
    }
    expect(parsed.warnings.map((w) => w.code)).toEqual(['relative-url', 'invalid-url', 'invalid-url']);
  });
});
