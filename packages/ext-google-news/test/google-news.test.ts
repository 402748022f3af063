import { KIT_NS, runExtension as kitRun } from '@usp-ts/testkit';
import { describe, expect, it } from 'vitest';
import { splitList } from '../src/google-news.js';
import { googleNews, NEWS_NAMESPACES } from '../src/index.js';

const N = 'http://www.google.com/schemas/sitemap-news/0.9';
const doc = (entries: string, ns = N) => `<entries xmlns="${KIT_NS}" xmlns:news="${ns}">${entries}</entries>`;
const entry = (news: string, loc = 'http://example.com/page') => `<entry><loc>${loc}</loc>${news}</entry>`;

/** The kit's extension host (core's engine and router), with the warning codes in order. */
async function runExtension(...args: Parameters<typeof kitRun>) {
  const r = await kitRun(...args);
  return { ...r, codes: r.warnings.map((w) => w.code) };
}

describe('googleNews()', () => {
  it('is plain data claiming the news namespace', () => {
    const ext = googleNews();
    expect(ext.name).toBe('google-news');
    expect(ext.namespaces).toEqual(NEWS_NAMESPACES);
    expect(ext.namespaces).toContain(N);
  });

  it('reads every field, genres included', async () => {
    const r = await runExtension(
      googleNews(),
      doc(
        entry(`<news:news>
          <news:publication><news:name> The Example Times </news:name><news:language>en</news:language></news:publication>
          <news:access>Subscription</news:access>
          <news:genres>PressRelease, Blog</news:genres>
          <news:publication_date>2008-12-23T09:15:00-05:00</news:publication_date>
          <news:title>Companies A, B in Merger Talks</news:title>
          <news:keywords>business, merger, acquisition, A, B</news:keywords>
          <news:stock_tickers>NASDAQ:A, NASDAQ:B</news:stock_tickers>
        </news:news>`),
      ),
    );
    const story = r.pages[0].newsStory!;
    expect({ ...story, publishDate: story.publishDate?.toSourceString() }).toEqual({
      title: 'Companies A, B in Merger Talks',
      publishDate: '2008-12-23T09:15:00-05:00',
      publicationName: 'The Example Times',
      publicationLanguage: 'en',
      access: 'Subscription',
      genres: ['PressRelease', 'Blog'],
      keywords: ['business', 'merger', 'acquisition', 'A', 'B'],
      stockTickers: ['NASDAQ:A', 'NASDAQ:B'],
    });
    expect(r.warnings).toEqual([]);
  });

  it('splits lists on commas, strips items and drops empty ones (usp keeps "")', async () => {
    const r = await runExtension(
      googleNews(),
      doc(
        entry(
          '<news:news><news:publication_date>2024-01-02</news:publication_date><news:title>T</news:title><news:keywords>a, b ,c,, d, </news:keywords><news:genres></news:genres></news:news>',
        ),
      ),
    );
    expect(r.pages[0].newsStory).toMatchObject({
      keywords: ['a', 'b', 'c', 'd'],
      genres: [],
      stockTickers: [],
    });
  });

  it('splits every short list as a split on commas with each part trimmed does', () => {
    // The loop splitList replaced, as the reference: every string of up to 6 characters over
    // letters, commas and whitespace of several kinds (all of which trim strips).
    const reference = (text: string) =>
      text
        .split(',')
        .map((p) => p.trim())
        .filter((p) => p.length > 0);
    const alphabet = ['a', 'b c', ',', ' ', '\t', '\n', '\u00a0', '\u2028', '\ufeff', 'é'];
    let checked = 0;
    const differ: string[] = [];
    const walk = (prefix: string, left: number): void => {
      // Compared as JSON, not with one expect() each: 111,111 of those take seconds.
      if (JSON.stringify(splitList(prefix)) !== JSON.stringify(reference(prefix))) differ.push(prefix);
      checked++;
      if (left > 0) for (const c of alphabet) walk(prefix + c, left - 1);
    };
    walk('', 5);
    expect(differ).toEqual([]);
    expect(checked).toBe(111_111);
  });

  it('reuses the date of a repeated publication date, and only of the same text', async () => {
    const story = (date: string) =>
      entry(
        `<news:news><news:publication_date>${date}</news:publication_date><news:title>T</news:title></news:news>`,
      );
    const dates = [
      '2024-01-02T10:00:00+01:00',
      '2024-01-02T10:00:00+01:00',
      '2024-01-02T10:00:00+02:00',
      ' 2024-01-02T10:00:00+01:00 ',
      'not a date',
      '2024-01-02T10:00:00Z',
      '2024-01-02T10:00:00+01:00',
    ];
    const r = await runExtension(googleNews(), doc(dates.map(story).join('')));
    const got = r.pages.map((p) => p.newsStory?.publishDate ?? null);
    // The repeat shares the first one's (immutable) value...
    expect(got[1]).toBe(got[0]);
    // ...and every other text is read on its own: offsets kept, instants apart.
    expect(got.map((d) => (d === null ? null : [d.epochMs, d.offsetMinutes]))).toEqual([
      [Date.UTC(2024, 0, 2, 9), 60],
      [Date.UTC(2024, 0, 2, 9), 60],
      [Date.UTC(2024, 0, 2, 8), 120],
      [Date.UTC(2024, 0, 2, 9), 60],
      null,
      [Date.UTC(2024, 0, 2, 10), 0],
      [Date.UTC(2024, 0, 2, 9), 60],
    ]);
    expect(r.codes).toEqual(['invalid-date']);
  });

  it('needs a title and a valid publication date, as usp; says why a story was dropped', async () => {
    const r = await runExtension(
      googleNews(),
      doc(
        [
          entry('<news:news><news:title>No date</news:title></news:news>', 'http://example.com/1'),
          entry(
            '<news:news><news:publication_date>not a date</news:publication_date><news:title>Bad date</news:title></news:news>',
            'http://example.com/2',
          ),
          entry(
            '<news:news><news:publication_date>2024-01-02</news:publication_date></news:news>',
            'http://example.com/3',
          ),
          entry(
            '<news:news><news:publication_date>2024-01-02</news:publication_date><news:title>  </news:title></news:news>',
            'http://example.com/4',
          ),
          entry('', 'http://example.com/5'),
        ].join(''),
      ),
    );
    expect(r.pages.map((p) => p.newsStory)).toEqual([null, null, null, null, null]);
    expect(r.codes).toEqual(['missing-field', 'invalid-date', 'missing-field', 'missing-field']);
    expect(r.warnings[1].message).toContain('http://example.com/2');
  });

  it('gives null for empty fields and ignores elements of other namespaces inside <news:news>', async () => {
    const r = await runExtension(
      googleNews(),
      `<entries xmlns="${KIT_NS}" xmlns:news="${N}" xmlns:x="urn:x"><entry><loc>http://example.com/p</loc><news:news><news:publication><news:name></news:name><news:language/></news:publication><x:title>Not ours</x:title><tag_without_inner_character_data name="value"/><news:access></news:access><news:publication_date>2024-01-02</news:publication_date><news:title><![CDATA[Bąž & co]]></news:title></news:news></entry></entries>`,
    );
    expect(r.pages[0].newsStory).toMatchObject({
      title: 'Bąž & co',
      publicationName: null,
      publicationLanguage: null,
      access: null,
    });
  });

  it('does not share lists between stories', async () => {
    const story = (t: string) =>
      entry(
        `<news:news><news:publication_date>2024-01-02</news:publication_date><news:title>${t}</news:title></news:news>`,
      );
    const r = await runExtension(googleNews(), doc(story('A') + story('B')));
    const [a, b] = r.pages.map((p) => p.newsStory!);
    expect(a.genres).not.toBe(b.genres);
    expect(a.keywords).not.toBe(b.keywords);
  });

  it('reads the https and trailing-slash spellings of the namespace', async () => {
    for (const ns of NEWS_NAMESPACES) {
      const r = await runExtension(
        googleNews(),
        doc(
          entry(
            '<news:news><news:publication_date>2024-01-02</news:publication_date><news:title>T</news:title></news:news>',
          ),
          ns,
        ),
      );
      expect(r.pages[0].newsStory?.title).toBe('T');
    }
  });
});
