import type { SiteState } from '@usp-ts/batch';
import { stateStoreSuite } from '@usp-ts/driver-testkit';
import { startTestRedis, type TestRedis } from '@usp-ts/test-redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisStateStore } from '../src/redis-state-store.js';

let redis: TestRedis;

/** An empty site state (built apart, so it suits SiteState with or without newer fields). */
function siteState(site: string, at: number): SiteState {
  const state = {
    site,
    walkedAt: at,
    probedAt: at,
    fullWalkAt: at,
    lastmodTrust: 0,
    unreachable: null,
    sitemaps: [],
  };
  return state as SiteState;
}
let prefix = 0;
let lastPrefix = '';

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await redis.stop();
});

stateStoreSuite('redisStateStore', {
  // Each test gets its own key space in the one server; reopen connects again to the same keys.
  open: async () => {
    lastPrefix = `t${++prefix}:`;
    return redisStateStore({ connection: redis.url, prefix: lastPrefix });
  },
  reopen: async () => redisStateStore({ connection: redis.url, prefix: lastPrefix }),
});

describe('redisStateStore', () => {
  it('is shared: what one worker saves, another loads', async () => {
    const one = redisStateStore({ connection: redis.url, prefix: 'shared:' });
    const two = redisStateStore({ connection: redis.url, prefix: 'shared:' });
    try {
      await one.saveSite(siteState('https://a.example/', 1));
      expect((await two.loadSite('https://a.example/'))?.walkedAt).toBe(1);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('uses a client it is given without closing it', async () => {
    const client = new Redis(redis.url);
    try {
      const store = redisStateStore({ connection: client, prefix: 'own:' });
      await store.saveSite(siteState('https://b.example/', 2));
      await store.close();
      expect(await client.exists('own:site:https://b.example/')).toBe(1);
    } finally {
      client.disconnect();
    }
  });

  it('reads a value written with the digests inside (base64), and moves them to the hash on save', async () => {
    const client = new Redis(redis.url);
    const store = redisStateStore({ connection: redis.url, prefix: 'legacy:' });
    try {
      const site = 'https://l.example/';
      const url = `${site}s.xml`;
      const digest = Uint8Array.from({ length: 32 }, (_, i) => i * 3);
      const sitemap = {
        url,
        finalUrl: url,
        type: 'PagesXMLSitemap',
        etag: null,
        lastModified: null,
        indexLastmod: null,
        bodySha256: null,
        children: [],
        pageCount: 2,
        news: false,
        crawlDelayMs: null,
        fetchedAt: 1,
      };
      const { unreachable: _, ...old } = siteState(site, 1);
      await client.set(
        `legacy:site:${site}`,
        JSON.stringify({ ...old, sitemaps: [{ ...sitemap, pages: Buffer.from(digest).toString('base64') }] }),
      );
      const loaded = (await store.loadSite(site))!;
      expect(loaded.unreachable).toBeNull();
      expect(loaded.sitemaps[0].pages).toEqual(digest);
      await store.saveSite(loaded);
      expect((await store.loadSite(site))?.sitemaps[0].pages).toBeUndefined();
      expect(await store.loadPages(site, url)).toEqual(digest);
      expect(await client.get(`legacy:site:${site}`)).not.toContain('pages":"');
    } finally {
      await store.close();
      client.disconnect();
    }
  });

  it('checks its options early', () => {
    expect(() => redisStateStore({ connection: 'file:///tmp/x' })).toThrow(/connection/);
    expect(() => redisStateStore({ connection: redis.url, prefx: 'a' } as never)).toThrow(
      /did you mean prefix/,
    );
  });
});
