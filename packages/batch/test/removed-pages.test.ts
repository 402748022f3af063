import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWebClient } from '@usp-ts/fetcher';
import { OpenedResources } from '@usp-ts/test-server';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { memorySink } from '../src/memory-sink.js';
import { memoryStateStore } from '../src/memory-state-store.js';
import { openNdjsonSink } from '../src/ndjson-sink.js';
import { digestParts, readDigest } from '../src/page-digest.js';
import { hostGate } from '../src/politeness-gate.js';
import type { PageRow } from '../src/rows.js';
import { walkSite } from '../src/site-job.js';
import type { SiteSink } from '../src/site-sink.js';
import type { StateStore } from '../src/state-store.js';
import { digestOfUrls } from './digest-of-urls.js';
import { FixtureSite, newsUrlset, sitemapIndex, testRegistry, urlset } from './fixture-sites.js';

const opened = new OpenedResources();
afterEach(() => opened.closeAll());
const dir = mkdtempSync(join(tmpdir(), 'usp-removed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function startSite(host: string): Promise<{ site: FixtureSite; home: string }> {
  const site = new FixtureSite();
  const server = await opened.server({ '*': site.route }, { host });
  return { site, home: `${server.origin}/` };
}

async function walk(home: string, state: StateStore, sink: SiteSink = memorySink()) {
  const client = opened.track(createWebClient({ allowPrivateNetworks: true, retries: 1 }));
  const result = await walkSite(
    { site: home },
    { webClient: client, registry: testRegistry(), gate: hostGate(), sink, state },
  );
  return result;
}

async function pagesOf(home: string, state: StateStore): Promise<[string, string | undefined][]> {
  const sink = memorySink();
  await walk(home, state, sink);
  return sink.rows.pages.map((p: PageRow) => [p.url.slice(home.length), p.change]);
}

/**
 * Rewrites every page digest of the site's state as an older usp wrote it, from the rows of the run
 * that saved it: layout 2 (SHA-1 of each URL and of its row's JSON text) or layout 3 (layout 4's
 * hashes, its URLs whole).
 */
async function asLayout(
  layout: 2 | 3,
  state: StateStore,
  home: string,
  rows: readonly PageRow[],
): Promise<number> {
  const sha8 = (text: string) => createHash('sha1').update(text).digest().subarray(0, 8);
  const text = new Map<string, string>();
  for (const { site: _s, sitemap: _m, change: _c, ...json } of rows as (PageRow & { change: string })[])
    text.set(json.url, JSON.stringify(json));
  const prev = await state.loadSite(home);
  if (prev === null) throw new Error('no state');
  let n = 0;
  const sitemaps = [];
  for (const s of prev.sitemaps) {
    const digest = await state.loadPages(home, s.url);
    if (digest === null || digestParts(digest).version !== 4) {
      sitemaps.push(s);
      continue;
    }
    const urls = readDigest(digest).urls ?? [];
    const entries =
      layout === 3
        ? digestParts(digest).entries
        : Buffer.concat(urls.flatMap((u) => [sha8(u), sha8(text.get(u) ?? '')]));
    sitemaps.push({ ...s, pages: digestOfUrls(layout, entries, urls) });
    n++;
  }
  await state.saveSite({ ...prev, sitemaps });
  return n;
}

describe('removed pages', () => {
  it('a sitemap read to its end that no longer lists a page says so, by URL, in the NDJSON file too', async () => {
    const { site, home } = await startSite('127.0.9.1');
    const state = memoryStateStore();
    site.set('/robots.txt', `Sitemap: ${home}a.xml\n`);
    site.set('/a.xml', urlset([{ loc: `${home}a1` }, { loc: `${home}a2` }, { loc: `${home}a3` }]));
    expect(await pagesOf(home, state)).toEqual([
      ['a1', 'new'],
      ['a2', 'new'],
      ['a3', 'new'],
    ]);
    site.set('/a.xml', urlset([{ loc: `${home}a1` }, { loc: `${home}a3` }, { loc: `${home}a4` }]));
    const out = join(dir, 'one');
    const sink = await openNdjsonSink({ dir: out });
    const r = await walk(home, state, sink);
    await sink.close();
    const lines = readFileSync(join(out, 'pages.ndjson'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((p) => [p.url.slice(home.length), p.change])).toEqual([
      ['a1', 'unchanged'],
      ['a3', 'unchanged'],
      ['a4', 'new'],
      ['a2', 'removed'],
    ]);
    expect(lines[3]).toEqual({ site: home, sitemap: `${home}a.xml`, url: `${home}a2`, change: 'removed' });
    expect(r.pages).toBe(4);
    // Said once: the next run has nothing to say.
    expect(await pagesOf(home, state)).toEqual([]);
  });

  it('unchanged rows held to the end of a sitemap that lost a page come out as they would have streamed, in order', async () => {
    const { site, home } = await startSite('127.0.9.7');
    const state = memoryStateStore();
    // Enough rows that the held lines fill several of the tracker's 64 KiB pieces.
    const stories = Array.from({ length: 900 }, (_, i) => ({
      loc: `${home}n${i}?q="é\\${i}"`,
      date: '2026-11-20T10:00:00+00:00',
    }));
    site.set('/robots.txt', `Sitemap: ${home}news.xml\n`);
    site.set('/news.xml', newsUrlset(stories));
    const first = memorySink();
    await walk(home, state, first);
    expect(first.rows.pages).toHaveLength(900);
    site.set('/news.xml', newsUrlset(stories.slice(0, 899)));
    const second = memorySink();
    await walk(home, state, second);
    const unchanged = second.rows.pages.filter((p) => p.change === 'unchanged');
    expect(unchanged).toEqual(first.rows.pages.slice(0, 899).map((p) => ({ ...p, change: 'unchanged' })));
    expect(second.rows.pages.at(-1)).toMatchObject({ url: stories[899].loc, change: 'removed' });
  });

  it('a sitemap its index no longer lists removes its pages, and those of the sitemaps below it', async () => {
    const { site, home } = await startSite('127.0.9.2');
    const state = memoryStateStore();
    site.set('/robots.txt', `Sitemap: ${home}idx.xml\n`);
    site.set('/idx.xml', sitemapIndex([{ loc: `${home}a.xml` }, { loc: `${home}old.xml` }]));
    site.set('/old.xml', sitemapIndex([{ loc: `${home}b.xml` }]));
    site.set('/a.xml', urlset([{ loc: `${home}a1` }]));
    site.set('/b.xml', urlset([{ loc: `${home}b1` }, { loc: `${home}b2` }]));
    expect((await pagesOf(home, state)).length).toBe(3);
    site.set('/idx.xml', sitemapIndex([{ loc: `${home}a.xml` }]));
    const sink = memorySink();
    const r = await walk(home, state, sink);
    expect(sink.rows.pages.map((p: PageRow) => [p.url.slice(home.length), p.change]).sort()).toEqual([
      ['b1', 'removed'],
      ['b2', 'removed'],
    ]);
    // The site's row counts every page row it wrote, those of the sitemaps gone from the index too.
    expect(r.pages).toBe(2);
    expect(await pagesOf(home, state)).toEqual([]);
  });

  it('a sitemap that fails this time removes nothing; nor does one listed by an index that failed', async () => {
    const { site, home } = await startSite('127.0.9.3');
    const state = memoryStateStore();
    site.set('/robots.txt', `Sitemap: ${home}idx.xml\nSitemap: ${home}a.xml\n`);
    site.set('/idx.xml', sitemapIndex([{ loc: `${home}b.xml` }]));
    site.set('/a.xml', urlset([{ loc: `${home}a1` }]));
    site.set('/b.xml', urlset([{ loc: `${home}b1` }]));
    expect((await pagesOf(home, state)).length).toBe(2);
    site.docs.delete('/idx.xml');
    site.docs.delete('/a.xml');
    expect(await pagesOf(home, state)).toEqual([]);
  });

  it('a sitemap cut short removes nothing and does not report its pages as new again on every run', async () => {
    const { site, home } = await startSite('127.0.9.4');
    const state = memoryStateStore();
    site.set('/robots.txt', `Sitemap: ${home}a.xml\n`);
    const whole = urlset([{ loc: `${home}a1` }, { loc: `${home}a2` }, { loc: `${home}a3` }]);
    // The body stops in the middle of the third URL: a truncated document.
    const cut = whole.slice(0, whole.indexOf(`${home}a3`) + 5);
    site.set('/a.xml', cut);
    const first = await pagesOf(home, state);
    expect(first.map(([, c]) => c).every((c) => c === 'new')).toBe(true);
    expect(first.map(([u]) => u).slice(0, 2)).toEqual(['a1', 'a2']);
    expect((await pagesOf(home, state)).filter(([, c]) => c === 'new' || c === 'removed')).toEqual([]);
    site.set('/a.xml', urlset([{ loc: `${home}a1` }, { loc: `${home}a3` }]));
    const whole2 = await pagesOf(home, state);
    expect(whole2.filter(([, c]) => c !== 'unchanged')).toEqual([
      ['a3', whole2.find(([u]) => u === 'a3')?.[1]],
      ['a2', 'removed'],
    ]);
  });

  for (const [layout, host] of [
    [2, '127.0.9.5'],
    [3, '127.0.9.6'],
  ] as const)
    it(`a state saved in layout ${layout} gives the same rows as one saved in layout 4, twice`, async () => {
      const { site, home } = await startSite(host);
      const old = memoryStateStore();
      const now = memoryStateStore();
      const pages = (n: number, tag: string): { loc: string; lastmod?: string }[] =>
        Array.from({ length: n }, (_, i) => ({
          loc: `${home}p${i}`,
          lastmod: `2026-01-0${1 + ((i * 7 + tag.length) % 9)}`,
        }));
      site.set('/robots.txt', `Sitemap: ${home}idx.xml\n`);
      site.set(
        '/idx.xml',
        sitemapIndex([{ loc: `${home}a.xml` }, { loc: `${home}b.xml` }, { loc: `${home}c.xml` }]),
      );
      site.set('/a.xml', urlset(pages(40, '')));
      site.set('/b.xml', urlset([{ loc: `${home}b1` }, { loc: `${home}b2` }]));
      site.set('/c.xml', urlset([{ loc: `${home}c1` }]));
      const first = memorySink();
      await walk(home, old, first);
      await walk(home, now, memorySink());
      // Every document of the walk keeps a digest (robots.txt and the index an empty one).
      expect(await asLayout(layout, old, home, first.rows.pages)).toBe(5);
      const rounds: [string, string | undefined][][] = [];
      // a.xml: two pages changed, one gone, one new; b.xml gone from the index; then a.xml again.
      const a2 = pages(40, '').filter((_, i) => i !== 5);
      a2[3] = { loc: `${home}p3`, lastmod: '2025-12-31' };
      a2[20] = { loc: `${home}p21`, lastmod: '2025-12-30' };
      a2.push({ loc: `${home}p40` });
      const a3 = a2.filter((_, i) => i !== 0);
      a3[a3.findIndex((u) => u.loc === `${home}p11`)] = { loc: `${home}p11`, lastmod: '2025-12-29' };
      for (const [a, idx] of [
        [a2, [`${home}a.xml`, `${home}c.xml`]],
        [a3, [`${home}a.xml`, `${home}c.xml`]],
      ] as const) {
        site.set('/a.xml', urlset([...a]));
        site.set('/idx.xml', sitemapIndex(idx.map((loc) => ({ loc }))));
        const got = [await pagesOf(home, old), await pagesOf(home, now)];
        expect(got[0]).toEqual(got[1]);
        rounds.push(got[0] as [string, string | undefined][]);
      }
      const marked = rounds.map((r) => r.filter(([, c]) => c !== 'unchanged').sort());
      expect(marked[0]).toEqual(
        [
          ['p3', 'changed'],
          ['p21', 'changed'],
          ['p5', 'removed'],
          ['p40', 'new'],
          ['b1', 'removed'],
          ['b2', 'removed'],
        ].sort(),
      );
      expect(marked[1]).toEqual(
        [
          ['p0', 'removed'],
          ['p11', 'changed'],
        ].sort(),
      );
      expect(rounds[0]?.filter(([, c]) => c === 'unchanged')).toHaveLength(37);
    });
});
