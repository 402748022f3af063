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

  it('write every mix of URL, priority, date text and changeFrequency as JSON.stringify does', () => {
    const frequencies = [null, 'always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never'];
    // Built at run time: not the literals the writer keeps.
    const others = [
      ...frequencies.map((v) => (v === null ? '' : [...v].join(''))),
      'Daily',
      'daily"',
      'x\u0002',
    ];
    const urls = [
      'https://example.com/a',
      'https://example.com/"q"',
      'https://example.com/\\',
      'https://e.com/\ud800',
    ];
    const priorities = [0.5, 0.3, 0.1 + 0.2, 1, 0, -0, Number.NaN, Number.POSITIVE_INFINITY, 1e21, 5e-7];
    // More priorities than the writer keeps pieces for: those past the kept ones are made each time.
    for (let i = 0; i < 300; i++) priorities.push(i / 1000 + 2);
    const dates = [null, '2024-01-02T03:04:05+02:00', '2024-01-02', 'a "date"', '\\', '\u001f', '\udc00x'];
    let checked = 0;
    for (let round = 0; round < 2; round++) {
      for (const url of urls) {
        for (const cf of [...frequencies, ...others]) {
          for (const lm of dates) {
            for (const priority of priorities) {
              // The many priorities with one URL, date and changeFrequency only.
              if (priority >= 2 && (url !== urls[0] || cf !== 'daily' || lm === null)) continue;
              const p = page({ url, priority, changeFrequency: cf as Page['changeFrequency'] });
              const want = JSON.stringify({ ...pageToJSON(p), lastModified: lm });
              expect(`{${plainPageFields(p, lm)}}`).toBe(want);
              checked++;
            }
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(5000);
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
