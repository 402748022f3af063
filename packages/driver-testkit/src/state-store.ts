import type { SitemapState, SiteState, StateStore } from '@usp-ts/batch';
import { afterEach, describe, expect, it } from 'vitest';

/** How the suite gets a store: a fresh one, and (for stores that persist) the same one reopened. */
export interface StateStoreFactory {
  /** A new, empty store. */
  open(): Promise<StateStore>;
  /** The store last opened, closed and opened again; omit for stores that keep nothing. */
  reopen?(): Promise<StateStore>;
}

function sitemap(url: string, extra: Partial<SitemapState> = {}): SitemapState {
  return {
    url,
    finalUrl: url,
    type: 'PagesXMLSitemap',
    etag: '"v1"',
    lastModified: 'Tue, 24 Nov 2026 10:00:00 GMT',
    indexLastmod: '2026-11-24T10:00:00.000Z',
    bodySha256: 'ab'.repeat(32),
    children: [],
    pageCount: 2,
    pages: Uint8Array.from({ length: 32 }, (_, i) => (i * 37) % 256),
    news: false,
    crawlDelayMs: null,
    fetchedAt: 1_790_000_000_000,
    ...extra,
  };
}

function siteState(site: string, sitemaps: SitemapState[]): SiteState {
  return {
    site,
    walkedAt: 1_790_000_000_000,
    fullWalkAt: 1_789_000_000_000,
    probedAt: 1_789_500_000_000,
    lastmodTrust: 2,
    unreachable: null,
    sitemaps,
  };
}

/** A state as `loadSite` gives it back: order-free, without the page digests (`loadPages`). */
const plain = (s: SiteState | null) =>
  s === null
    ? null
    : {
        ...s,
        sitemaps: [...s.sitemaps].sort((a, b) => a.url.localeCompare(b.url)).map(({ pages: _, ...m }) => m),
      };

/** Every digest of a site, by sitemap URL, as `loadPages` gives them. */
async function digestsOf(store: StateStore, site: string, urls: readonly string[]) {
  const out: Record<string, number[] | null> = {};
  for (const url of urls) {
    const d = await store.loadPages(site, url);
    out[url] = d === null ? null : [...d];
  }
  return out;
}

/**
 * The contract of `StateStore`, as every store must keep it (the unstorage model: one suite,
 * many drivers). Call it at the top level of a test file.
 */
export function stateStoreSuite(name: string, factory: StateStoreFactory): void {
  describe(`state store contract: ${name}`, () => {
    const opened: StateStore[] = [];
    const open = async () => {
      const s = await factory.open();
      opened.push(s);
      return s;
    };
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
    });

    it('knows nothing of a site never saved', async () => {
      const store = await open();
      expect(await store.loadSite('https://nowhere.example/')).toBeNull();
      expect(await store.lastMark('run-1')).toBeNull();
    });

    it('gives back what was saved, field for field (bytes, nulls, children, order-free)', async () => {
      const store = await open();
      const state = siteState('https://a.example/', [
        sitemap('https://a.example/robots.txt', {
          type: 'IndexRobotsTxtSitemap',
          pages: null,
          pageCount: 0,
          crawlDelayMs: 1500,
          etag: null,
          children: [
            { url: 'https://a.example/s1.xml', lastModified: null },
            { url: 'https://a.example/s2.xml', lastModified: '2026-11-20T00:00:00.000Z' },
          ],
        }),
        sitemap('https://a.example/s1.xml', { news: true, finalUrl: 'https://a.example/s1-moved.xml' }),
        sitemap('https://a.example/s2.xml', { bodySha256: null, indexLastmod: null, lastModified: null }),
      ]);
      await store.saveSite(state);
      const back = await store.loadSite('https://a.example/');
      expect(plain(back)).toEqual(plain(state));
      expect(
        back?.sitemaps.find((m) => m.type === 'IndexRobotsTxtSitemap')?.children.map((c) => c.url),
      ).toEqual(['https://a.example/s1.xml', 'https://a.example/s2.xml']);
      const digest = await store.loadPages('https://a.example/', 'https://a.example/s1.xml');
      expect(digest).toBeInstanceOf(Uint8Array);
      expect([...(digest ?? [])]).toEqual([...(state.sitemaps[1].pages ?? [])]);
      expect(await store.loadPages('https://a.example/', 'https://a.example/robots.txt')).toBeNull();
    });

    it('loads no digest with the site, one sitemap at a time with loadPages', async () => {
      const store = await open();
      const site = 'https://lazy.example/';
      await store.saveSite(siteState(site, [sitemap(`${site}a.xml`), sitemap(`${site}b.xml`)]));
      const back = await store.loadSite(site);
      expect(back?.sitemaps.map((m) => m.pages)).toEqual([undefined, undefined]);
      expect(await store.loadPages(site, `${site}a.xml`)).toEqual(sitemap(`${site}a.xml`).pages);
      expect(await store.loadPages(site, `${site}nope.xml`)).toBeNull();
      expect(await store.loadPages('https://never.example/', `${site}a.xml`)).toBeNull();
    });

    it('keeps a digest left out of saveSite, drops it on null, replaces it when given', async () => {
      const store = await open();
      const site = 'https://keep.example/';
      const urls = ['a', 'b', 'c', 'd'].map((x) => `${site}${x}.xml`);
      await store.saveSite(
        siteState(
          site,
          urls.map((u) => sitemap(u)),
        ),
      );
      const fresh = Uint8Array.from({ length: 16 }, (_, i) => 200 + i);
      const loaded = (await store.loadSite(site))!;
      await store.saveSite({
        ...loaded,
        sitemaps: loaded.sitemaps
          .filter((m) => m.url !== urls[3])
          .map((m) =>
            m.url === urls[1]
              ? { ...m, pages: null, pageCount: 0 }
              : m.url === urls[2]
                ? { ...m, pages: fresh }
                : { ...m, etag: '"moved"' },
          ),
      });
      const old = [...(sitemap(urls[0]).pages ?? [])];
      expect(await digestsOf(store, site, urls)).toEqual({
        [urls[0]]: old,
        [urls[1]]: null,
        [urls[2]]: [...fresh],
        [urls[3]]: null,
      });
      // A sitemap dropped from the state and listed again later starts without a digest.
      await store.saveSite(siteState(site, [sitemap(urls[3], { pages: undefined })]));
      expect(await store.loadPages(site, urls[3])).toBeNull();
    });

    it('records that a site gave no answer, and forgets it when saved without', async () => {
      const store = await open();
      const site = 'https://dead.example/';
      const mark = { at: 1_790_000_000_500, since: 1_789_000_000_000, reason: `${site}robots.txt: timeout` };
      await store.saveSite({ ...siteState(site, []), unreachable: mark });
      expect((await store.loadSite(site))?.unreachable).toEqual(mark);
      await store.saveSite(siteState(site, []));
      expect((await store.loadSite(site))?.unreachable).toBeNull();
    });

    it('lists the sites that gave no answer (skipped for a store without unreachableSites)', async (ctx) => {
      const store = await open();
      if (store.unreachableSites === undefined) ctx.skip();
      const mark = { at: 1_790_000_000_500, since: 1_790_000_000_500, reason: 'no answer' };
      expect(await store.unreachableSites?.()).toEqual(new Set());
      await store.saveSite({ ...siteState('https://dead.example/', []), unreachable: mark });
      await store.saveSite({ ...siteState('https://gone.example/', []), unreachable: mark });
      await store.saveSite(siteState('https://alive.example/', []));
      expect(await store.unreachableSites?.()).toEqual(
        new Set(['https://dead.example/', 'https://gone.example/']),
      );
      await store.saveSite(siteState('https://gone.example/', []));
      expect(await store.unreachableSites?.()).toEqual(new Set(['https://dead.example/']));
    });

    it('replaces a site as a whole: sitemaps no longer listed are gone', async () => {
      const store = await open();
      await store.saveSite(
        siteState('https://b.example/', [
          sitemap('https://b.example/x.xml'),
          sitemap('https://b.example/y.xml'),
        ]),
      );
      await store.saveSite(
        siteState('https://b.example/', [sitemap('https://b.example/y.xml', { etag: '"v2"' })]),
      );
      const back = await store.loadSite('https://b.example/');
      expect(back?.sitemaps.map((m) => [m.url, m.etag])).toEqual([['https://b.example/y.xml', '"v2"']]);
    });

    it('keeps sites apart, also when saved concurrently', async () => {
      const store = await open();
      const sites = Array.from({ length: 20 }, (_, i) => `https://s${i}.example/`);
      await Promise.all(sites.map((s) => store.saveSite(siteState(s, [sitemap(`${s}sitemap.xml`)]))));
      for (const s of sites) {
        const back = await store.loadSite(s);
        expect(back?.sitemaps.map((m) => m.url)).toEqual([`${s}sitemap.xml`]);
      }
    });

    it('records the mark with the save, the last one per run', async () => {
      const store = await open();
      await store.saveSite(siteState('https://c.example/', []), {
        runId: 'r1',
        site: 'https://c.example/',
        offsets: { pages: 10 },
      });
      await store.saveSite(siteState('https://d.example/', []), {
        runId: 'r1',
        site: 'https://d.example/',
        offsets: { pages: 25 },
      });
      await store.saveSite(siteState('https://e.example/', []), {
        runId: 'r2',
        site: 'https://e.example/',
        offsets: { pages: 3 },
      });
      expect(await store.lastMark('r1')).toEqual({
        runId: 'r1',
        site: 'https://d.example/',
        offsets: { pages: 25 },
      });
      expect(await store.lastMark('r2')).toEqual({
        runId: 'r2',
        site: 'https://e.example/',
        offsets: { pages: 3 },
      });
    });

    it('hands out copies: editing what it gave back changes nothing stored', async () => {
      const store = await open();
      await store.saveSite(siteState('https://f.example/', [sitemap('https://f.example/s.xml')]));
      const first = await store.loadSite('https://f.example/');
      (first!.sitemaps as SitemapState[]).length = 0;
      const digest = await store.loadPages('https://f.example/', 'https://f.example/s.xml');
      digest![0] = 255;
      expect((await store.loadSite('https://f.example/'))?.sitemaps).toHaveLength(1);
      expect((await store.loadPages('https://f.example/', 'https://f.example/s.xml'))?.[0]).toBe(0);
    });

    it('takes back what it loaded: moved validators are kept, and a new digest replaces the old', async () => {
      const store = await open();
      const site = 'https://g.example/';
      await store.saveSite(
        siteState(site, [sitemap(`${site}a.xml`), sitemap(`${site}b.xml`), sitemap(`${site}c.xml`)]),
      );
      const loaded = (await store.loadSite(site))!;
      const fresh = Uint8Array.from({ length: 16 }, (_, i) => i + 1);
      await store.saveSite({
        ...loaded,
        walkedAt: 5,
        sitemaps: loaded.sitemaps
          .filter((m) => !m.url.endsWith('c.xml'))
          .map((m) =>
            m.url.endsWith('a.xml') ? { ...m, etag: '"v2"', fetchedAt: 7 } : { ...m, pages: fresh },
          ),
      });
      expect(plain(await store.loadSite(site))).toEqual(
        plain({
          ...loaded,
          walkedAt: 5,
          sitemaps: [sitemap(`${site}a.xml`, { etag: '"v2"', fetchedAt: 7 }), sitemap(`${site}b.xml`)],
        }),
      );
      expect(await digestsOf(store, site, [`${site}a.xml`, `${site}b.xml`, `${site}c.xml`])).toEqual({
        [`${site}a.xml`]: [...(sitemap(`${site}a.xml`).pages ?? [])],
        [`${site}b.xml`]: [...fresh],
        [`${site}c.xml`]: null,
      });
    });

    if (factory.reopen !== undefined) {
      it('keeps everything across close and reopen', async () => {
        const store = await open();
        const state = siteState('https://g.example/', [sitemap('https://g.example/s.xml')]);
        await store.saveSite(state, { runId: 'r9', site: 'https://g.example/', offsets: { pages: 7 } });
        await store.close();
        opened.splice(opened.indexOf(store), 1);
        const again = await factory.reopen!();
        opened.push(again);
        expect(plain(await again.loadSite('https://g.example/'))).toEqual(plain(state));
        expect(await again.loadPages('https://g.example/', 'https://g.example/s.xml')).toEqual(
          state.sitemaps[0].pages,
        );
        expect((await again.lastMark('r9'))?.offsets).toEqual({ pages: 7 });
      });
    }
  });
}
