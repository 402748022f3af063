import { createHash } from 'node:crypto';
import {
  newPageDraft,
  type Page,
  pageToJSON,
  plainPageDate,
  plainPageFields,
  type Sitemap,
} from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { PageTracker } from '../src/page-changes.js';
import { digestParts, digestUrlsAt, frontCoded, readDigest, urlSection } from '../src/page-digest.js';
import { DigestTable, LANES, plainRowHash, textRowHash, urlHash } from '../src/page-hash.js';
import { cutDocumentState } from '../src/removed-pages.js';
import type { PageRow } from '../src/rows.js';
import { digestOfUrls } from './digest-of-urls.js';

const SITE = 'http://example.com/';
const SITEMAP = 'http://example.com/sitemap.xml';

function page(url: string, fields: Partial<Page> = {}): Page {
  return { ...newPageDraft(url), ...fields };
}

const lanes = (): [number, number] => [LANES[0] as number, LANES[1] as number];
const sha8 = (text: string) => createHash('sha1').update(text).digest().subarray(0, 8);

/** The digest today's usp (layout 2) or an older one (layout 1) wrote for these pages. */
function oldDigest(pages: readonly Page[], layout: 1 | 2): Uint8Array {
  const entries = Buffer.concat(pages.flatMap((p) => [sha8(p.url), sha8(JSON.stringify(pageToJSON(p)))]));
  if (layout === 1) return entries;
  return digestOfUrls(
    2,
    entries,
    pages.map((p) => p.url),
  );
}

/** One document's run against `previous`: its rows' marks by URL path, its gone pages' URLs, the tracker. */
function run(pages: readonly Page[], previous: Uint8Array | null, previousCount = 0) {
  const rows: PageRow[] = [];
  const tracker = new PageTracker({
    site: SITE,
    sitemap: SITEMAP,
    emit: (row) => rows.push(row),
    marking: true,
    previous: previous === null ? null : { pages: previous, pageCount: previousCount },
  });
  for (const p of pages) tracker.append(p);
  tracker.close();
  const gone = previous === null ? [] : tracker.gonePages().map((i) => readDigest(previous).urls?.[i] ?? i);
  return { marks: rows.map((r) => [r.url.slice(SITE.length), r.change]), gone, tracker };
}

/** The digest and page count a document cut short leaves in the state. */
function cutState(tracker: PageTracker): { digest: Uint8Array; count: number } {
  const node = { url: SITEMAP, type: 'PagesXMLSitemap' } as Sitemap;
  const state = cutDocumentState({ requestedUrl: SITEMAP, node, tracker, before: null });
  return { digest: state.pages as Uint8Array, count: state.pageCount };
}

/** A deterministic sequence of numbers in [0, 1). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const bits = (x: number) => {
  let n = 0;
  for (let v = x >>> 0; v !== 0; v >>>= 1) n += v & 1;
  return n;
};

describe('layout 3 hashes', () => {
  it("a plain page's row hash is equal exactly when its row's text is (for one URL)", () => {
    const priorities = [0, -0, 0.5, 0.5000000000000001, 1, 1e21, Number.NaN, Number.POSITIVE_INFINITY, -1];
    // '' and 'x' on both sides: a hash of the strings run together would take (x, '') for ('', x).
    const dates = [null, '', 'x', '2026-01-02', '2026-01-02T00:00:00', '2026-01-02T00:00:00+01:00', 'a"b\\'];
    const freqs = [null, '', 'x', 'daily', 'weekly', 'dail'];
    const seen = new Map<string, string>();
    const texts = new Map<string, string>();
    for (const priority of priorities)
      for (const lm of dates)
        for (const cf of freqs) {
          const p = page('http://example.com/a', {
            priority,
            changeFrequency: cf as Page['changeFrequency'],
          });
          const text = plainPageFields(p, lm);
          plainRowHash(priority, lm, cf);
          const h = lanes().join(',');
          const other = texts.get(h);
          if (other !== undefined) expect(other).toBe(text);
          texts.set(h, text);
          const before = seen.get(text);
          if (before !== undefined) expect(before).toBe(h);
          seen.set(text, h);
        }
    // -0 and 0, and NaN and the infinities, write the same text: 5 of the 9 priorities are distinct.
    expect(seen.size).toBe((7 * priorities.length * dates.length * freqs.length) / 9);
  });

  it('gives no two of 200,000 URLs one hash, and a one-character change flips about half the bits', () => {
    const keys = new Set<string>();
    for (let i = 0; i < 200_000; i++) {
      urlHash(`http://127.77.${i % 250}.1:80/a/${i}.html`);
      keys.add(lanes().join(','));
    }
    expect(keys.size).toBe(200_000);
    const next = random(7);
    let flipped = 0;
    let least = 64;
    const n = 4_000;
    for (let k = 0; k < n; k++) {
      const len = 1 + Math.floor(next() * 80);
      const units = Array.from({ length: len }, () => 32 + Math.floor(next() * 95));
      const at = Math.floor(next() * len);
      const changed = [...units];
      changed[at] = ((changed[at] as number) ^ (1 << Math.floor(next() * 7))) as number;
      for (const hash of [urlHash, textRowHash]) {
        hash(String.fromCharCode(...units));
        const [a, b] = lanes();
        hash(String.fromCharCode(...changed));
        const [c, d] = lanes();
        const diff = bits(a ^ c) + bits(b ^ d);
        flipped += diff;
        least = Math.min(least, diff);
      }
    }
    const mean = flipped / (2 * n);
    expect(mean).toBeGreaterThan(31);
    expect(mean).toBeLessThan(33);
    expect(least).toBeGreaterThan(10);
  });

  it('looks entries up by URL hash: the later row of a URL listed twice, each entry seen by its URL', () => {
    const entry = (a: number, b: number, c: number, d: number) =>
      Buffer.from(new Int32Array([a, b, c, d]).buffer);
    const table = new DigestTable(
      Buffer.concat([entry(1, 2, 3, 4), entry(0, 0, 5, 6), entry(1, 2, 7, 8), entry(9, 9, 9, 9)]),
    );
    expect(table.compare(1, 2, 3, 4)).toBe(2);
    expect(table.compare(1, 2, 7, 8)).toBe(1);
    expect(table.compare(2, 1, 7, 8)).toBe(0);
    expect(table.unseen()).toEqual([1, 3]);
    expect(table.compare(0, 0, 5, 6)).toBe(1);
    expect(table.unseen()).toEqual([3]);
    expect(new DigestTable(Buffer.alloc(0)).unseen()).toEqual([]);
  });
});

describe('digests of layouts 1 to 3 (written by an older usp)', () => {
  const first = [
    page('http://example.com/a', { priority: 0.5 }),
    page('http://example.com/b', { changeFrequency: 'daily' }),
    page('http://example.com/c'),
    page('http://example.com/d', {
      images: [
        { loc: 'http://example.com/i.png', caption: null, geoLocation: null, title: 't', license: null },
      ],
    }),
    page('http://example.com/e', { priority: -0 }),
  ];
  // b changed, d changed (its image), e written the same (0), c gone, f new.
  const second = [
    first[0] as Page,
    page('http://example.com/b', { changeFrequency: 'weekly' }),
    page('http://example.com/d', {
      images: [
        { loc: 'http://example.com/j.png', caption: null, geoLocation: null, title: 't', license: null },
      ],
    }),
    page('http://example.com/e', { priority: 0 }),
    page('http://example.com/f'),
  ];
  const marks = [
    ['a', 'unchanged'],
    ['b', 'changed'],
    ['d', 'changed'],
    ['e', 'unchanged'],
    ['f', 'new'],
  ];

  it('layout 2: marks as today, names the gone page, and saves layout 4, which the next run reads', () => {
    const old = run(second, oldDigest(first, 2), first.length);
    expect(old.marks).toEqual(marks);
    expect(old.gone).toEqual(['http://example.com/c']);
    const saved = old.tracker.digest;
    expect(digestParts(saved).version).toBe(4);
    // The same digest as a run with no last digest writes.
    expect(Buffer.from(saved).equals(Buffer.from(run(second, null).tracker.digest))).toBe(true);
    // The next run, against layout 3: b changed back, f gone, g new.
    const third = [
      first[0] as Page,
      first[1] as Page,
      second[2] as Page,
      second[3] as Page,
      page('http://example.com/g'),
    ];
    const next = run(third, saved, second.length);
    expect(next.marks).toEqual([
      ['a', 'unchanged'],
      ['b', 'changed'],
      ['d', 'unchanged'],
      ['e', 'unchanged'],
      ['g', 'new'],
    ]);
    expect(next.gone).toEqual(['http://example.com/f']);
  });

  it('layout 1: marks as today, names no gone page (it kept no URL)', () => {
    const old = run(second, oldDigest(first, 1), first.length);
    expect(old.marks).toEqual(marks);
    expect(old.tracker.gonePages()).toEqual([2]);
    expect(digestParts(old.tracker.digest).version).toBe(4);
  });

  it('a document cut short against layout 2 keeps layout 2 with the pages it did not reach, read as today next time', () => {
    const cut = run(second.slice(0, 2), oldDigest(first, 2), first.length);
    const { digest, count } = cutState(cut.tracker);
    // As today's usp wrote it: the pages read, then those of the last run not reached (c, d, e).
    const expected = oldDigest(
      [second[0] as Page, second[1] as Page, first[2] as Page, first[3] as Page, first[4] as Page],
      2,
    );
    expect(Buffer.from(digest).equals(Buffer.from(expected))).toBe(true);
    expect(count).toBe(5);
    const whole = run(second, digest, count);
    expect(whole.marks).toEqual([
      ['a', 'unchanged'],
      ['b', 'unchanged'],
      ['d', 'changed'],
      ['e', 'unchanged'],
      ['f', 'new'],
    ]);
    expect(whole.gone).toEqual(['http://example.com/c']);
    expect(digestParts(whole.tracker.digest).version).toBe(4);
  });

  it('layout 3: marks as layout 4 does, names the gone page, and saves the same layout 4 digest', () => {
    const four = run(first, null).tracker.digest;
    const { entries } = digestParts(four);
    const three = digestOfUrls(
      3,
      entries,
      first.map((p) => p.url),
    );
    expect(digestParts(three).version).toBe(3);
    const old = run(second, three, first.length);
    expect(old.marks).toEqual(marks);
    expect(old.gone).toEqual(['http://example.com/c']);
    const now = run(second, four, first.length);
    expect(now.marks).toEqual(marks);
    expect(now.gone).toEqual(['http://example.com/c']);
    expect(Buffer.from(old.tracker.digest).equals(Buffer.from(now.tracker.digest))).toBe(true);
    // Cut short against layout 3: layout 4, the pages read then those not reached.
    const cut = cutState(run(second.slice(0, 2), three, first.length).tracker);
    expect(digestParts(cut.digest).version).toBe(4);
    expect(readDigest(cut.digest).urls?.map((u) => u.slice(SITE.length))).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  for (const layout of [3, 4] as const) {
    it(`a document cut short against layout ${layout} keeps layout 4 with the pages it did not reach`, () => {
      const four = run(first, null).tracker.digest;
      const saved =
        layout === 4
          ? four
          : digestOfUrls(
              3,
              digestParts(four).entries,
              first.map((p) => p.url),
            );
      const cut = run(second.slice(0, 2), saved, first.length);
      const { digest, count } = cutState(cut.tracker);
      const parts = digestParts(digest);
      expect(parts.version).toBe(4);
      expect(count).toBe(5);
      expect(readDigest(digest).urls?.map((u) => u.slice(SITE.length))).toEqual(['a', 'b', 'c', 'd', 'e']);
      expect(digestUrlsAt(digest, [1, 2, 4])?.map((u) => u.slice(SITE.length))).toEqual(['b', 'c', 'e']);
      const whole = run(second, digest, count);
      expect(whole.marks).toEqual([
        ['a', 'unchanged'],
        ['b', 'unchanged'],
        ['d', 'changed'],
        ['e', 'unchanged'],
        ['f', 'new'],
      ]);
      expect(whole.gone).toEqual(['http://example.com/c']);
    });
  }

  it('hashes a plain page by its fields and any other by its JSON text', () => {
    const { tracker } = run(first, null);
    const { entries } = digestParts(tracker.digest);
    first.forEach((p, i) => {
      const lm = plainPageDate(p);
      if (lm === undefined) textRowHash(JSON.stringify(pageToJSON(p)));
      else plainRowHash(p.priority, lm, p.changeFrequency);
      expect([entries.readInt32LE(i * 16 + 8), entries.readInt32LE(i * 16 + 12)]).toEqual(lanes());
    });
  });
});

describe('layout 4 URLs (front-coded)', () => {
  const entries = (n: number) => Buffer.alloc(n * 16, 7);
  const roundTrip = (urls: readonly string[]) => {
    const digest = digestOfUrls(4, entries(urls.length), urls);
    const utf8 = urls.map((u) => Buffer.from(u).toString());
    expect(digestParts(digest).version).toBe(4);
    expect(readDigest(digest).urls).toEqual(utf8);
    const odd = utf8.map((_, i) => i).filter((i) => i % 2 === 1);
    expect(digestUrlsAt(digest, odd)).toEqual(odd.map((i) => utf8[i]));
    expect(digestUrlsAt(digest, [urls.length - 1])).toEqual([utf8[urls.length - 1]]);
    return digest;
  };

  it('reads back every URL exactly: long shared prefixes, non-ASCII ones, repeats, a \n, an empty one', () => {
    const long = `http://example.com/${'d/'.repeat(100)}`;
    roundTrip([
      `${long}a`,
      `${long}b`,
      `${long}b`,
      `${long}`,
      'http://example.com/é/ü/1',
      'http://example.com/é/ü/2',
      'http://example.com/é/ü/2\n3',
      'http://example.com/é/ü/2\n4',
      'http://example.com/é/ü/5',
      'http://example.com/\u{1f600}a',
      'http://example.com/\u{1f600}b',
      'http://example.com/\u{1f601}b',
      'http://example.com/\ud800x',
      'http://example.com/\ud800y',
      '',
      'h',
      `${'€'.repeat(60)}a`,
      `${'€'.repeat(60)}b`,
    ]);
  });

  it('shares at most 126 bytes, none of a surrogate, and gives a URL with a \n after a \n-free one as JSON', () => {
    const long = `http://example.com/${'x'.repeat(200)}`;
    expect(frontCoded(`${long}1`, `${long}2`)).toBe(`~${long.slice(126)}2`);
    expect(frontCoded('http://a/é1', 'http://a/é2')).toBe(`\u000b2`);
    expect(frontCoded('http://a/\u{1f600}1', 'http://a/\u{1f600}2')).toBe(`\u0009\u{1f600}2`);
    expect(frontCoded('\u{1f600}', '\u{1f600}')).toBe('\u0000\u{1f600}');
    expect(frontCoded('http://a/1', 'http://a/2\n')).toBe(`\u007f${JSON.stringify('http://a/2\n')}`);
    // The URLs of the bench's farm: ~8 bytes a URL instead of ~38.
    const farm = Array.from({ length: 1_000 }, (_, i) => `http://127.77.0.16:40431/g/${i}.html`);
    expect(urlSection(4, farm).length).toBeLessThan(urlSection(3, farm).length / 3);
    roundTrip(farm);
  });
});
