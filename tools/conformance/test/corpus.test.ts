import { join } from 'node:path';
import {
  IndexRobotsTxtSitemap,
  IndexXMLSitemap,
  InvalidSitemap,
  newPageDraft,
  type ParsedSitemap,
  type Sitemap,
} from '@usp-ts/core';
import { createPagesSitemap } from '@usp-ts/core/engine';
import { describe, expect, it } from 'vitest';
import { compareToGolden } from '../src/compare.js';
import {
  casesDir,
  hasCorpus,
  loadCases,
  loadDifferences,
  readCase,
  repoRoot,
  sharedDir,
} from '../src/corpus.js';
import type { CorpusNode } from '../src/corpus-form.js';
import { documentView, UNFETCHED_CHILD_REASON } from '../src/document-view.js';

const parsed = (sitemap: Sitemap, children: string[] = []): ParsedSitemap => ({
  sitemap,
  url: sitemap.url,
  type: sitemap.type === 'IndexWebsiteSitemap' ? 'InvalidSitemap' : sitemap.type,
  children: children.map((url) => ({ url, lastModified: null })),
  warnings: [],
  bytes: 0,
  truncated: false,
});

describe('locations', () => {
  it('finds the repository root and the shared folder beside it', () => {
    expect(repoRoot()).toMatch(/[/\\]main$|.+/);
    if (process.env.USP_SHARED_DIR === undefined) expect(sharedDir()).toBe(join(repoRoot(), '..', 'shared'));
    expect(casesDir()).toBe(join(sharedDir(), 'conformance', 'cases'));
  });

  it('reads conformance-differences.json as an object of reasons', () => {
    const diffs = loadDifferences();
    for (const reason of Object.values(diffs)) expect(typeof reason).toBe('string');
  });
});

describe('documentView', () => {
  it('turns index children into un-fetched InvalidSitemaps, and a self-reference into recursion', () => {
    const view = documentView(
      parsed(new IndexXMLSitemap({ url: 'http://a.com/i.xml' }), [
        'http://a.com/1.xml',
        'http://a.com/i.xml',
      ]),
    );
    expect(view).toEqual({
      type: 'IndexXMLSitemap',
      url: 'http://a.com/i.xml',
      subSitemaps: [
        { type: 'InvalidSitemap', url: 'http://a.com/1.xml', reason: UNFETCHED_CHILD_REASON },
        {
          type: 'InvalidSitemap',
          url: 'http://a.com/i.xml',
          reason: expect.stringContaining('Recursion detected'),
        },
      ],
    });
    const robots = documentView(parsed(new IndexRobotsTxtSitemap({ url: 'http://a.com/robots.txt' }), []));
    expect(robots).toEqual({
      type: 'IndexRobotsTxtSitemap',
      url: 'http://a.com/robots.txt',
      subSitemaps: [],
    });
  });

  it('keeps pages and invalid nodes as sitemapToJSON gives them', () => {
    const page = { ...newPageDraft('http://a.com/p') };
    const view = documentView(
      parsed(createPagesSitemap('PagesRSSSitemap', { url: 'http://a.com/f', pages: [page] })),
    );
    expect(view.type).toBe('PagesRSSSitemap');
    expect(view.pages?.map((p) => p.url)).toEqual(['http://a.com/p']);
    expect(documentView(parsed(new InvalidSitemap({ url: 'u', reason: 'r' })))).toEqual({
      type: 'InvalidSitemap',
      url: 'u',
      reason: 'r',
    });
  });
});

describe.skipIf(!hasCorpus())('corpus', () => {
  it('loads the cases with their kinds and filters them', () => {
    const all = loadCases();
    expect(all.length).toBeGreaterThanOrEqual(110);
    const docs = loadCases({ kind: 'document' });
    expect(docs.every((c) => c.meta.kind === 'document')).toBe(true);
    expect(docs.length + loadCases({ kind: 'site' }).length).toBe(all.length);
    expect(loadCases({ names: ['rss2-feed'] }).map((c) => c.name)).toEqual(['rss2-feed']);
    expect(loadCases((c) => c.name.startsWith('atom')).length).toBeGreaterThan(0);
  });

  it('reads a case with its input bytes and goldens, and a golden matches itself', () => {
    const c = readCase('xml-hreflang-alternates');
    expect(c.meta.kind).toBe('document');
    expect(c.input).toBeInstanceOf(Uint8Array);
    expect(c.expectedAlternates?.length).toBeGreaterThan(0);
    expect(compareToGolden(c.expected, c.expected).ok).toBe(true);
    const s = readCase('site-gzip-detection');
    expect(s.input).toBeNull();
    expect(s.expectedRequests?.['GET /robots.txt -> 200']).toBe(1);
    expect(() => readCase('no-such-case')).toThrow(/not found/);
  });

  it('every golden in the corpus matches itself under every option (the comparison is consistent)', () => {
    for (const info of loadCases()) {
      const c = readCase(info.name);
      // The golden tree has no alternates: put those of expected_alternates.json onto its pages.
      const tree = structuredClone(c.expected);
      const alts = [...(c.expectedAlternates ?? [])];
      const walk = (n: CorpusNode): void => {
        for (const p of n.pages ?? []) p.alternates = alts.shift()?.alternates ?? null;
        for (const s of n.sub_sitemaps ?? []) walk(s);
      };
      walk(tree);
      const r = compareToGolden(tree, c.expected, {
        siteCase: c.meta.kind === 'site',
        expectedAlternates: c.expectedAlternates,
      });
      expect(r.ok, info.name).toBe(true);
    }
  });
});
