import { describe, expect, it } from 'vitest';
import { newPageDraft, type Page } from '../src/contract/model.js';
import { SitemapDate } from '../src/contract/sitemap-date.js';
import { feedNewsStory, pageToJSON, plainPageDate, plainPageFields } from '../src/parse.js';

const page = (over: Partial<Page>): Page => ({ ...newPageDraft('https://example.com/a'), ...over });

describe('plainPageDate and plainPageFields', () => {
  it("write a plain page's JSON form byte for byte, escapes, lone surrogates and odd numbers included", () => {
    const pages = [
      page({}),
      page({ url: 'https://example.com/"quoted"\\back\u0001\n', priority: Number.NaN }),
      page({ url: 'https://example.com/\ud83d\ude00/\ud800', priority: -0, changeFrequency: 'daily' }),
      page({ lastModified: new SitemapDate(Date.UTC(2024, 0, 2, 3, 4, 5), 120, 250), priority: 1 }),
      page({ lastModified: new SitemapDate(Date.UTC(2024, 0, 2), null), priority: Number.POSITIVE_INFINITY }),
    ];
    for (const p of pages) {
      const lm = plainPageDate(p);
      expect(lm).not.toBeUndefined();
      expect(`{${plainPageFields(p, lm as string | null)}}`).toBe(JSON.stringify(pageToJSON(p)));
    }
    // Another URL in the page's place, as `--strip-url` writes it.
    const p = page({});
    expect(`{${plainPageFields(p, null, '/a')}}`).toBe(JSON.stringify({ ...pageToJSON(p), url: '/a' }));
  });

  it("write every changeFrequency as JSON.stringify does, the protocol's seven and any other string", () => {
    const values = ['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never'];
    // Built at run time: not the literals the writer compares against.
    const others = [
      ...values.map((v) => [...v].join('')),
      'Daily',
      'daily"',
      'week\\ly',
      'x\u0002',
      '\ud800',
      '',
    ];
    for (const cf of [...values, ...others]) {
      const p = page({ changeFrequency: cf as Page['changeFrequency'] });
      expect(`{${plainPageFields(p, null)}}`).toBe(JSON.stringify(pageToJSON(p)));
    }
  });

  it('leave every other page to pageToJSON', () => {
    const others = [
      page({ images: [] }),
      page({ alternates: [] }),
      page({ extensions: { x: 1 } }),
      page({ newsStory: feedNewsStory('t', null) }),
      { ...page({}), priority: '0.5' } as unknown as Page,
    ];
    for (const p of others) expect(plainPageDate(p)).toBeUndefined();
  });
});
