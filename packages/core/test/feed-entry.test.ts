import { describe, expect, it } from 'vitest';
import { newPageDraft, type Page } from '../src/contract/model.js';
import type { ParseContext } from '../src/contract/plugin.js';
import { SitemapDate } from '../src/contract/sitemap-date.js';
import { FeedPageEmitter, feedNewsStory, feedText } from '../src/engine/feed-entry.js';
import { resolveFeedLink } from '../src/engine/feed-url.js';

function context(budget = Number.POSITIVE_INFINITY) {
  const pages: Page[] = [];
  const warnings: [string, string][] = [];
  const ctx: ParseContext = {
    url: 'https://example.com/feed.xml',
    limits: { maxPagesPerDocument: 1000, maxChildrenPerIndex: 1000, maxUrlLength: 40 },
    atEntry: () => {},
    atLine: () => {},
    warn: (code, message) => warnings.push([code, message]),
    page: (page) => {
      if (pages.length >= budget) return false;
      pages.push(page);
      return true;
    },
    child: () => true,
  };
  return { ctx, pages, warnings };
}

function emitLink(emitter: FeedPageEmitter, written: string, base = 'https://example.com/feed.xml') {
  const link = resolveFeedLink(written, base);
  if (link === null) throw new Error(`unusable link ${written}`);
  const draft = newPageDraft(link.url);
  return emitter.emit(draft, link, written);
}

describe('feedText', () => {
  it('strips the text and reads an empty element as absent', () => {
    expect(feedText('  Title \n')).toBe('Title');
    expect(feedText(' \t\n ')).toBeNull();
    expect(feedText('')).toBeNull();
  });
});

describe('feedNewsStory', () => {
  it('carries the title and date and leaves the Google News fields empty', () => {
    const date = new SitemapDate(Date.UTC(2024, 0, 2), 0);
    expect(feedNewsStory('A story', date)).toEqual({
      title: 'A story',
      publishDate: date,
      publicationName: null,
      publicationLanguage: null,
      access: null,
      genres: [],
      keywords: [],
      stockTickers: [],
    });
  });
});

describe('FeedPageEmitter', () => {
  it('emits each link once, first wins, and warns on the duplicate', () => {
    const { ctx, pages, warnings } = context();
    const emitter = new FeedPageEmitter(ctx, 'RSS <item>');
    expect(emitLink(emitter, 'https://example.com/a')).toBe(true);
    expect(emitLink(emitter, 'https://example.com/b')).toBe(true);
    expect(emitLink(emitter, 'https://example.com/a')).toBe(true);
    expect(pages.map((p) => p.url)).toEqual(['https://example.com/a', 'https://example.com/b']);
    expect(warnings).toEqual([['duplicate-url', 'Duplicate RSS <item> link skipped: https://example.com/a']]);
  });

  it('skips a link longer than maxUrlLength with a warning', () => {
    const { ctx, pages, warnings } = context();
    const emitter = new FeedPageEmitter(ctx, 'Atom <entry>');
    expect(emitLink(emitter, `https://example.com/${'x'.repeat(40)}`)).toBe(true);
    expect(pages).toEqual([]);
    expect(warnings.map(([code]) => code)).toEqual(['invalid-url']);
    expect(warnings[0][1]).toMatch(/^Atom <entry> link longer than 40 characters skipped/);
  });

  it('notes a relative link with what the feed wrote and emits the resolved URL', () => {
    const { ctx, pages, warnings } = context();
    const emitter = new FeedPageEmitter(ctx, 'RSS <item>');
    expect(emitLink(emitter, '/post/1')).toBe(true);
    expect(pages.map((p) => p.url)).toEqual(['https://example.com/post/1']);
    expect(warnings).toEqual([
      ['relative-url', 'Relative RSS <item> link /post/1 resolved to https://example.com/post/1'],
    ]);
  });

  it('says stop once the page budget refuses a page', () => {
    const { ctx, pages } = context(1);
    const emitter = new FeedPageEmitter(ctx, 'RSS <item>');
    expect(emitLink(emitter, 'https://example.com/a')).toBe(true);
    expect(emitLink(emitter, 'https://example.com/b')).toBe(false);
    expect(pages).toHaveLength(1);
  });
});
