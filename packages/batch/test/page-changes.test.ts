import { createHash } from 'node:crypto';
import { newPageDraft, type Page, pageToJSON, plainPageDate, SitemapDate } from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { PageTracker } from '../src/page-changes.js';
import { digestParts, digestUrlsAt, readDigest } from '../src/page-digest.js';
import { LANES, plainRowHash, textRowHash, urlHash } from '../src/page-hash.js';
import type { PageRow } from '../src/rows.js';
import { digestOfUrls } from './digest-of-urls.js';

const SITE = 'http://example.com/';
const SITEMAP = 'http://example.com/sitemap.xml';

function page(url: string, fields: Partial<Page> = {}): Page {
  return { ...newPageDraft(url), ...fields };
}

/** Pages whose JSON takes every path of the tracker's hand-written rows, and the general one. */
const AWKWARD: Page[] = [
  page('http://example.com/plain'),
  page('http://example.com/q"uote\\back', { priority: 0.8, changeFrequency: 'daily' }),
  page('http://example.com/ctl\u0001\t\n', { lastModified: new SitemapDate(Date.UTC(2026, 0, 2), 0) }),
  page('http://example.com/lone\ud800surrogate', { priority: Number.NaN }),
  page('http://example.com/astral\u{1f600}\u2028\u00e9', { priority: -0 }),
  page('http://example.com/big', {
    priority: 1e21,
    lastModified: new SitemapDate(Date.UTC(2026, 0, 2), null),
  }),
  page('http://example.com/images', {
    images: [
      { loc: 'http://example.com/i.png', caption: null, geoLocation: null, title: 't"', license: null },
    ],
  }),
  page('http://example.com/ext', { extensions: { 'x-test': { n: 1 } } }),
];

function track(pages: readonly Page[]): { rows: [PageRow, string | undefined][]; tracker: PageTracker } {
  const rows: [PageRow, string | undefined][] = [];
  const tracker = new PageTracker({
    site: SITE,
    sitemap: SITEMAP,
    emit: (row, json) => rows.push([row, json]),
    marking: true,
    previous: null,
  });
  for (const p of pages) tracker.append(p);
  tracker.close();
  return { rows, tracker };
}

const sha8 = (text: string) => createHash('sha1').update(text).digest().subarray(0, 8);
const lanes8 = () =>
  Buffer.from(new Uint8Array(new Int32Array([LANES[0] as number, LANES[1] as number]).buffer));

/** A page's entry in a digest of layout 3: its URL's hash, then its row's (by fields when plain). */
function entry3(p: Page): Buffer {
  urlHash(p.url);
  const key = lanes8();
  const lm = plainPageDate(p);
  if (lm === undefined) textRowHash(JSON.stringify(pageToJSON(p)));
  else plainRowHash(p.priority, lm, p.changeFrequency);
  return Buffer.concat([key, lanes8()]);
}

/** A page's entry in a digest of layout 2 (or 1): SHA-1 of its URL and of its row's JSON text. */
export function entry2(p: Page): Buffer {
  return Buffer.concat([sha8(p.url), sha8(JSON.stringify(pageToJSON(p)))]);
}

describe('PageTracker', () => {
  it("writes each row's line as JSON.stringify of the row, whatever its strings and numbers", () => {
    const { rows } = track(AWKWARD);
    expect(rows).toHaveLength(AWKWARD.length);
    rows.forEach(([row, line], i) => {
      // The row is the page's JSON form between the site and sitemap and its change, key by key.
      const expected = { site: SITE, sitemap: SITEMAP, ...pageToJSON(AWKWARD[i] as Page), change: 'new' };
      expect(Object.entries(row)).toEqual(Object.entries(expected));
      expect(line).toBe(JSON.stringify(expected));
    });
  });

  it("keeps in its digest (layout 4) each page's URL hash, the hash of its row, and its URL", () => {
    // Enough URLs (non-ASCII ones among them) to fill several of the digest's pieces.
    const many = Array.from({ length: 3_000 }, (_, i) =>
      page(`http://example.com/p\u00e9ge/${i}/${'x'.repeat(i % 40)}`, { priority: (i % 10) / 10 }),
    );
    const pages = [...AWKWARD, ...many];
    const { tracker } = track(pages);
    // Layout 4 as `digestOfUrls` makes it from the pages' hashes and URLs.
    const expected = digestOfUrls(
      4,
      Buffer.concat(pages.map(entry3)),
      pages.map((p) => p.url),
    );
    expect(Buffer.from(tracker.digest).equals(Buffer.from(expected))).toBe(true);
    // Every URL read back as UTF-8 gives it (a lone surrogate as U+FFFD), the one with a '\n' too.
    const urls = pages.map((p) => Buffer.from(p.url).toString());
    expect(readDigest(tracker.digest).urls).toEqual(urls);
    const at = [0, 2, 3, 4, 9, 500, 3_007];
    expect(digestUrlsAt(tracker.digest, at)).toEqual(at.map((i) => urls[i]));
    // Front-coded: the 3,000 URLs take far fewer bytes than whole.
    const { urls: stored } = digestParts(tracker.digest);
    expect(stored.length).toBeLessThan(Buffer.byteLength(urls.join('\n')) / 2);
    // Read again once closed: the same digest.
    expect(tracker.digest).toBe(tracker.digest);
  });

  it('gives the same digest when it was read while the document was open', () => {
    const many = Array.from({ length: 3_000 }, (_, i) =>
      page(`http://example.com/p/${i}/${'y'.repeat(i % 50)}`),
    );
    const whole = track(many).tracker.digest;
    const tracker = new PageTracker({
      site: SITE,
      sitemap: SITEMAP,
      emit: () => {},
      marking: true,
      previous: null,
    });
    many.forEach((p, i) => {
      tracker.append(p);
      // A read made bytes of what was gathered so far: the next URL still follows a '\n'.
      if (i === 1_000) expect(readDigest(tracker.digest).urls).toHaveLength(1_001);
    });
    tracker.close();
    expect(Buffer.from(tracker.digest).equals(Buffer.from(whole))).toBe(true);
  });

  it('marks the pages of a second run against the first one', () => {
    const first = track(AWKWARD).tracker;
    const changed = AWKWARD.map((p, i) => (i === 1 ? page(p.url, { priority: 0.1 }) : p));
    const rows: PageRow[] = [];
    const tracker = new PageTracker({
      site: SITE,
      sitemap: SITEMAP,
      emit: (row) => rows.push(row),
      marking: true,
      previous: { pages: first.digest, pageCount: first.count },
    });
    for (const p of [...changed, page('http://example.com/new')]) tracker.append(p);
    tracker.close();
    expect(rows.map((r) => r.change)).toEqual([
      ...AWKWARD.map((_, i) => (i === 1 ? 'changed' : 'unchanged')),
      'new',
    ]);
  });

  it('hands an output that takes lines the same lines, held ones included, and no row object', () => {
    const first = track(AWKWARD).tracker;
    // Unchanged pages first: they are held until the changed one releases them.
    const second = [...AWKWARD.map((p, i) => (i === 5 ? page(p.url, { priority: 0.1 }) : p))];
    const run = (emitLine?: (json: string) => void) => {
      const objects: [PageRow, string | undefined][] = [];
      const tracker = new PageTracker({
        site: SITE,
        sitemap: SITEMAP,
        emit: (row, json) => objects.push([row, json]),
        ...(emitLine !== undefined ? { emitLine } : {}),
        marking: true,
        previous: { pages: first.digest, pageCount: first.count },
      });
      for (const p of second) tracker.append(p);
      tracker.close();
      return objects;
    };
    const expected = run().map(([row, json]) => {
      expect(json).toBe(JSON.stringify(row));
      return json;
    });
    const lines: string[] = [];
    expect(run((json) => lines.push(json))).toEqual([]);
    expect(lines).toEqual(expected);
    expect(lines.map((l) => (JSON.parse(l) as PageRow).change)).toEqual(
      AWKWARD.map((_, i) => (i === 5 ? 'changed' : 'unchanged')),
    );
  });

  it('hands an output that takes lines in bulk the held rows as their UTF-8 lines, counted, the rest one by one', () => {
    const many = Array.from({ length: 900 }, (_, i) => page(`http://example.com/p/${i}é`, { priority: 0.5 }));
    const pages = [...AWKWARD, ...many];
    const first = track(pages).tracker;
    // All unchanged but the last (held past one 64 KiB piece), then a new one streams.
    const second = [...pages.slice(0, -1), page(pages[pages.length - 1]?.url ?? '', { priority: 0.1 })];
    second.push(page('http://example.com/new'));
    const run = (bulk: boolean) => {
      const lines: string[] = [];
      const blocks: number[] = [];
      const tracker = new PageTracker({
        site: SITE,
        sitemap: SITEMAP,
        emit: () => expect.fail('no row object'),
        emitLine: (json) => lines.push(json),
        ...(bulk
          ? {
              emitLines: (text: Buffer, rows: number) => {
                const got = text.toString('utf8').split('\n');
                expect(got.pop()).toBe('');
                expect(got).toHaveLength(rows);
                blocks.push(rows);
                lines.push(...got);
              },
            }
          : {}),
        marking: true,
        previous: { pages: first.digest, pageCount: first.count },
      });
      for (const p of second) tracker.append(p);
      tracker.close();
      return { lines, blocks };
    };
    const one = run(false);
    const bulk = run(true);
    expect(bulk.lines).toEqual(one.lines);
    expect(bulk.blocks.length).toBeGreaterThan(1);
    expect(bulk.blocks.reduce((a, b) => a + b, 0)).toBe(pages.length - 1);
  });
});
