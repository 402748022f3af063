import { createWebClient } from '@usp-ts/fetcher';
import { OpenedResources } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { batchWalk } from '../src/batch-walk.js';
import { memorySink } from '../src/memory-sink.js';
import { memoryStateStore } from '../src/memory-state-store.js';
import { type BatchProgress, sitesText } from '../src/progress.js';
import type { SiteResult } from '../src/rows.js';
import { countSiteLines } from '../src/site-list.js';
import type { StateStore } from '../src/state-store.js';
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

describe('batchWalk when a site fails inside its job', () => {
  it("records an unexpected exception as the site's error row with the message, and goes on with the others", async () => {
    const [a, b, c] = await Promise.all(['127.0.7.5', '127.0.7.6', '127.0.7.7'].map((h) => site(h)));
    const inner = memorySink();
    let beganA = false;
    // Injected failures: the sink's `begin` throws the first time for a, its `page` throws for b.
    const sink = {
      begin(s: string) {
        if (s === a && !beganA) {
          beganA = true;
          throw new TypeError('begin broke');
        }
        const out = inner.begin(s);
        if (s !== b) return out;
        return {
          ...out,
          page() {
            throw new RangeError('page broke');
          },
        };
      },
    };
    const results = new Map<string, SiteResult>();
    for await (const r of batchWalk([a, b, c], {
      webClient: client(),
      registry: testRegistry(),
      sink,
      sites: 3,
    })) {
      results.set(r.site, r);
    }
    expect(results.get(a)).toMatchObject({ status: 'error', reason: 'internal error: begin broke' });
    expect(results.get(b)).toMatchObject({ status: 'error', reason: 'page broke' });
    expect(results.get(c)).toMatchObject({ status: 'ok', pages: 1 });
    expect(inner.rows.sites.map((r) => [r.site, r.status]).sort()).toEqual(
      [
        [a, 'error'],
        [b, 'error'],
        [c, 'ok'],
      ].sort(),
    );
    // b's rows were dropped with it.
    expect(inner.rows.pages.map((p) => p.site)).toEqual([c]);
  });
});

describe('batchWalk counts by one rule', () => {
  it('ends with every line of the input counted once, its statuses adding up to the sites done', async () => {
    const [a, b] = await Promise.all(['127.0.7.8', '127.0.7.9'].map((h) => site(h)));
    const input = [a, 'not a url', a.toUpperCase(), 'not a url', b, '# comment'];
    let last: BatchProgress | null = null;
    for await (const _ of batchWalk(input, {
      webClient: client(),
      registry: testRegistry(),
      sink: memorySink(),
      isDone: (s) => s === b,
      onProgress: (p) => {
        last = p;
      },
    })) {
      // drained
    }
    const p = last as unknown as BatchProgress;
    expect(p.statuses).toEqual({ ok: 1, invalid: 2 });
    expect(p.sitesDone).toBe(3);
    expect(p.sitesSkipped).toBe(1);
    expect(p.sitesDone + p.sitesSkipped).toBe(await countSiteLines(input));
    expect(sitesText(p)).toBe('4 sites (1 ok, 2 invalid, 1 done before, resumed)');
    expect(sitesText({ ...p, sitesDone: 0, statuses: {}, sitesSkipped: 4 })).toBe(
      '4 sites (4 done before, resumed)',
    );
  });

  it("skips the sites of a resuming sink's done set without an isDone of the caller's", async () => {
    const [a, b] = await Promise.all(['127.0.7.11', '127.0.7.12'].map((h) => site(h)));
    const inner = memorySink();
    // A sink opened to resume a run: b was committed by its earlier part.
    const resuming = { begin: inner.begin.bind(inner), done: new Set([b]) };
    const results: SiteResult[] = [];
    let last: BatchProgress | null = null;
    for await (const r of batchWalk([a, b], {
      webClient: client(),
      registry: testRegistry(),
      sink: resuming,
      onProgress: (p) => {
        last = p;
      },
    })) {
      results.push(r);
    }
    expect(results.map((r) => r.site)).toEqual([a]);
    expect(inner.rows.sites.map((r) => r.site)).toEqual([a]);
    expect((last as unknown as BatchProgress).sitesSkipped).toBe(1);
  });

  it('counts no request for a site the private-network guard refused: none was sent', async () => {
    const a = await site('127.0.7.10');
    const results: SiteResult[] = [];
    for await (const r of batchWalk([a], {
      webClient: opened.track(createWebClient({ retries: 1 })),
      registry: testRegistry(),
      sink: memorySink(),
    })) {
      results.push(r);
    }
    expect(results).toMatchObject([{ site: a, status: 'unreachable', requests: 0 }]);
  });
});

describe('batchWalk reads ahead for the state', () => {
  it("tells a state with willLoad the next `sites` lines' sites before it loads them, never a done or invalid line's", async () => {
    const [a, b, c, d, e] = await Promise.all(
      ['127.0.7.13', '127.0.7.14', '127.0.7.15', '127.0.7.16', '127.0.7.17'].map((h) => site(h)),
    );
    const inner = memoryStateStore();
    const log: string[] = [];
    const hints: string[][] = [];
    const state: StateStore = {
      ...inner,
      loadSite: (s) => {
        log.push(`load ${s}`);
        return inner.loadSite(s);
      },
      loadPages: (s, u) => inner.loadPages(s, u),
      saveSite: (s, m) => inner.saveSite(s, m),
      lastMark: (r) => inner.lastMark(r),
      close: () => inner.close(),
      willLoad(sites) {
        hints.push([...sites]);
        for (const s of sites) log.push(`hint ${s}`);
      },
    };
    const ended: string[] = [];
    for await (const r of batchWalk([a, b, 'not a url', c, d, e], {
      webClient: client(),
      registry: testRegistry(),
      sink: memorySink(),
      state,
      sites: 2,
      isDone: (s) => s === d,
    })) {
      ended.push(r.site);
    }
    expect(ended.sort()).toEqual(['not a url', a, b, c, e].sort());
    // Two lines at a time (`sites`): the invalid line and the done site are not hinted.
    expect(hints).toEqual([[a, b], [c], [e]]);
    for (const s of [a, b, c, e]) expect(log.indexOf(`hint ${s}`)).toBeLessThan(log.indexOf(`load ${s}`));
    expect(log.filter((l) => l.startsWith('load')).sort()).toEqual(
      [a, b, c, e].map((s) => `load ${s}`).sort(),
    );
  });
});
