import type { StateStore } from '@usp-ts/core';
import { createWebClient } from '@usp-ts/fetcher';
import { OpenedResources } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { memorySink } from '../src/batch-sink.js';
import { batchWalk } from '../src/batch-walk.js';
import { memoryStateStore } from '../src/memory-state-store.js';
import { FixtureSite, testRegistry, urlset } from './fixture-sites.js';

const opened = new OpenedResources();
afterEach(() => opened.closeAll());

/** A one-urlset site on its own loopback address; `hold` delays its robots.txt until it resolves. */
async function site(host: string, hold?: Promise<void>): Promise<string> {
  const fixture = new FixtureSite();
  const server = await opened.server(
    {
      '*': async (req, res) => {
        if (hold !== undefined && req.url === '/robots.txt') await hold;
        await fixture.route(req, res);
      },
    },
    { host },
  );
  const home = `${server.origin}/`;
  fixture.set('/robots.txt', `Sitemap: ${home}a.xml\n`);
  fixture.set('/a.xml', urlset([{ loc: `${home}p1` }]));
  return home;
}

const client = () => opened.track(createWebClient({ allowPrivateNetworks: true, retries: 1 }));

describe('batchWalk', () => {
  it('yields each site when it ends, in the order they end, not the order they started', async () => {
    let release = () => {};
    const held = await site(
      '127.0.7.1',
      new Promise<void>((resolve) => {
        release = resolve;
      }),
    );
    const quick = await site('127.0.7.2');
    const order: string[] = [];
    for await (const r of batchWalk([held, quick], {
      webClient: client(),
      registry: testRegistry(),
      sink: memorySink(),
      sites: 2,
    })) {
      order.push(r.site);
      // The held site answers only once the other one was reported.
      if (r.site === quick) release();
    }
    expect(order).toEqual([quick, held]);
  });

  it('fails the run with the error of a state that cannot be saved, stopping the walks in flight at once', async () => {
    let release = () => {};
    const held = await site(
      '127.0.7.3',
      new Promise<void>((resolve) => {
        release = resolve;
      }),
    );
    const failing = await site('127.0.7.4');
    const inner = memoryStateStore();
    const broken = new Error('disk full');
    const saved: string[] = [];
    const state: StateStore = {
      ...inner,
      loadSite: (s) => inner.loadSite(s),
      loadPages: (s, u) => inner.loadPages(s, u),
      lastMark: (r) => inner.lastMark(r),
      close: () => inner.close(),
      async saveSite(s, mark) {
        if (s.site === failing) {
          // The held site is still walking when this save fails.
          release();
          throw broken;
        }
        await inner.saveSite(s, mark);
        saved.push(s.site);
      },
    };
    const yielded: string[] = [];
    await expect(
      (async () => {
        for await (const r of batchWalk([held, failing], {
          webClient: client(),
          registry: testRegistry(),
          sink: memorySink(),
          state,
          sites: 2,
        })) {
          yielded.push(r.site);
        }
      })(),
    ).rejects.toBe(broken);
    expect(yielded).toEqual([]);
    // The walk in flight was stopped (not left to its deadline) and saved nothing.
    expect(saved).toEqual([]);
  });
});
