import { once } from 'node:events';
import type { StateStore } from '@usp-ts/core';
import { createWebClient } from '@usp-ts/fetcher';
import { OpenedResources } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { memorySink } from '../src/batch-sink.js';
import { memoryStateStore } from '../src/memory-state-store.js';
import { hostGate } from '../src/politeness-gate.js';
import { type SiteJobContext, walkSite } from '../src/site-job.js';
import { FixtureSite, newsUrlset, sitemapIndex, testRegistry, urlset } from './fixture-sites.js';

const opened = new OpenedResources();
afterEach(() => opened.closeAll());

async function startSite(host: string): Promise<{ site: FixtureSite; home: string }> {
  const site = new FixtureSite();
  const server = await opened.server({ '*': site.route }, { host });
  return { site, home: `${server.origin}/` };
}

function context(state: StateStore | null) {
  const client = opened.track(createWebClient({ allowPrivateNetworks: true, retries: 1 }));
  const sink = memorySink();
  const ctx: SiteJobContext = { webClient: client, registry: testRegistry(), gate: hostGate(), sink, state };
  return { ctx, sink };
}

/** robots.txt → index → a.xml and b.xml, two pages each. */
function publish(
  site: FixtureSite,
  home: string,
  v: { aLastmod: string; bLastmod: string; bPages: string[] },
) {
  site.set('/robots.txt', `User-agent: *\nSitemap: ${home}idx.xml\n`);
  site.set(
    '/idx.xml',
    sitemapIndex([
      { loc: `${home}a.xml`, lastmod: v.aLastmod },
      { loc: `${home}b.xml`, lastmod: v.bLastmod },
    ]),
  );
  site.set('/a.xml', urlset([{ loc: `${home}a1` }, { loc: `${home}a2` }]));
  site.set(
    '/b.xml',
    urlset(v.bPages.map((p) => ({ loc: `${home}${p.split('@')[0]}`, lastmod: p.split('@')[1] }))),
  );
}

describe('walkSite with a state', () => {
  it('marks pages new, then replays 304s and emits nothing, then emits only the changed sitemap, marked', async () => {
    const { site, home } = await startSite('127.0.3.1');
    const state = memoryStateStore();
    publish(site, home, {
      aLastmod: '2026-11-01',
      bLastmod: '2026-11-01',
      bPages: ['b1@2026-11-01', 'b2@2026-11-01'],
    });

    const first = context(state);
    const r1 = await walkSite({ site: home }, first.ctx);
    expect(r1).toMatchObject({ status: 'ok', pages: 4, notModified: 0 });
    expect(first.sink.rows.pages.map((p) => p.change)).toEqual(['new', 'new', 'new', 'new']);

    // Nothing changed: robots.txt and the index answer 304, their stored children are walked.
    site.resetHits();
    const second = context(state);
    const r2 = await walkSite({ site: home }, second.ctx);
    expect(r2).toMatchObject({ status: 'ok', pages: 0, notModified: 4 });
    expect(second.sink.rows.pages).toEqual([]);
    const rows2 = Object.fromEntries(second.sink.rows.sitemaps.map((s) => [s.url.slice(home.length), s]));
    expect(rows2['robots.txt']).toMatchObject({
      status: 304,
      notModified: true,
      type: 'IndexRobotsTxtSitemap',
    });
    expect(rows2['idx.xml']).toMatchObject({
      status: 304,
      notModified: true,
      type: 'IndexXMLSitemap',
      change: 'unchanged',
    });
    expect(rows2['a.xml']).toMatchObject({ notModified: true, change: 'unchanged' });
    expect(site.hitsOf('/a.xml')).toBe(1);

    // b.xml changes (b2's lastmod moves, b3 appears) and says so in the index.
    publish(site, home, {
      aLastmod: '2026-11-01',
      bLastmod: '2026-11-20',
      bPages: ['b1@2026-11-01', 'b2@2026-11-20', 'b3@2026-11-20'],
    });
    const third = context(state);
    const r3 = await walkSite({ site: home }, third.ctx);
    expect(r3).toMatchObject({ status: 'ok', pages: 3 });
    expect(third.sink.rows.pages.map((p) => [p.url.slice(home.length), p.change])).toEqual([
      ['b1', 'unchanged'],
      ['b2', 'changed'],
      ['b3', 'new'],
    ]);
  });

  it('writes each sitemap row with its fields in one order, optional ones in place', async () => {
    const site = new FixtureSite();
    const server = await opened.server(
      {
        '/b.xml': (_req, res) => {
          res.writeHead(301, { location: '/b2.xml' });
          res.end();
        },
        '*': site.route,
      },
      { host: '127.0.3.9' },
    );
    const home = `${server.origin}/`;
    const state = memoryStateStore();
    publish(site, home, { aLastmod: '2026-11-01', bLastmod: '2026-11-01', bPages: ['b1@2026-11-01'] });
    site.set('/b2.xml', urlset([{ loc: `${home}b1` }]));
    const first = context(state);
    await walkSite({ site: home }, first.ctx);
    const keys = (url: string) =>
      Object.keys(first.sink.rows.sitemaps.find((s) => s.url === `${home}${url}`) ?? {});
    const common = ['parent', 'type', 'status', 'notModified', 'skipped', 'etag', 'lastModified'];
    const tail = ['bytes', 'pages', 'ms', 'change'];
    expect(keys('robots.txt')).toEqual(['site', 'url', ...common, ...tail]);
    expect(keys('b.xml')).toEqual(['site', 'url', 'finalUrl', ...common, ...tail]);
    // An index child that is not a sitemap: invalid, with its reason last.
    site.set('/idx.xml', sitemapIndex([{ loc: `${home}c.xml` }]));
    site.set('/c.xml', '<html>not a sitemap</html>');
    const second = context(memoryStateStore());
    await walkSite({ site: home }, second.ctx);
    const invalid = second.sink.rows.sitemaps.find((s) => s.url === `${home}c.xml`);
    expect(Object.keys(invalid ?? {})).toEqual(['site', 'url', ...common, 'bytes', 'pages', 'ms', 'reason']);
  });

  it('skips a child whose index lastmod did not move only once the site proved its lastmod honest', async () => {
    const { site, home } = await startSite('127.0.3.2');
    const state = memoryStateStore();
    const v = { aLastmod: '2026-11-01', bLastmod: '2026-11-01', bPages: ['b1@2026-11-01'] };
    publish(site, home, v);
    const run = async () => {
      site.resetHits();
      const c = context(state);
      return { result: await walkSite({ site: home }, c.ctx), rows: c.sink.rows };
    };
    await run();
    // Not proven yet: a.xml is asked for (conditionally) although its lastmod stayed.
    publish(site, home, { ...v, bLastmod: '2026-11-02', bPages: ['b1@2026-11-02'] });
    await run();
    expect(site.hitsOf('/a.xml')).toBe(1);
    // b.xml's lastmod moved with its body: honest. Now a.xml, unmoved, is not requested at all.
    publish(site, home, { ...v, bLastmod: '2026-11-03', bPages: ['b1@2026-11-03'] });
    const third = await run();
    expect(site.hitsOf('/a.xml')).toBe(0);
    expect(site.hitsOf('/b.xml')).toBe(1);
    expect(third.result.skipped).toBe(1);
    expect(third.rows.sitemaps.find((s) => s.url.endsWith('/a.xml'))).toMatchObject({
      skipped: true,
      status: null,
    });
    expect(third.rows.pages.map((p) => [p.url.slice(home.length), p.change])).toEqual([['b1', 'changed']]);
  });

  it('never trusts a lastmod that moves while the body stays ("lastmod = now" servers)', async () => {
    const { site, home } = await startSite('127.0.3.3');
    const state = memoryStateStore();
    const run = async (stamp: string) => {
      publish(site, home, { aLastmod: stamp, bLastmod: stamp, bPages: ['b1@2026-01-01'] });
      site.resetHits();
      await walkSite({ site: home }, context(state).ctx);
    };
    await run('2026-11-01');
    await run('2026-11-02');
    await run('2026-11-03');
    expect(site.hitsOf('/a.xml')).toBe(1);
    expect((await state.loadSite(home))?.lastmodTrust).toBe(-1);
  });

  it('treats a 200 with the same body as unchanged when the server sends no validators', async () => {
    const { site, home } = await startSite('127.0.3.4');
    site.set('/sitemap.xml', urlset([{ loc: `${home}p1` }, { loc: `${home}p2` }]), { etag: false });
    const state = memoryStateStore();
    const first = context(state);
    expect((await walkSite({ site: home }, first.ctx)).pages).toBe(2);
    const second = context(state);
    const r2 = await walkSite({ site: home }, second.ctx);
    expect(r2).toMatchObject({ status: 'ok', pages: 0, notModified: 0 });
    expect(second.sink.rows.pages).toEqual([]);
    expect(second.sink.rows.sitemaps.find((s) => s.url.endsWith('/sitemap.xml'))).toMatchObject({
      status: 200,
      change: 'unchanged',
    });
  });

  it('reports a site with no HTTP answer as unreachable and keeps its state', async () => {
    const { ctx, sink } = context(memoryStateStore());
    // Port 9 (discard) on a loopback address nobody listens on: refused.
    const r = await walkSite({ site: 'http://127.0.3.5:9/' }, ctx);
    expect(r.status).toBe('unreachable');
    expect(r.reason).toMatch(/ECONNREFUSED|refused/i);
    expect(sink.rows.sites).toEqual([r]);
  });
});

describe('walkSite on a host that refuses every request', () => {
  it('reports it unreachable with the HTTP reason, not ok with 0 pages', async () => {
    const server = await opened.server({ '*': { status: 429, body: 'slow down' } }, { host: '127.0.3.7' });
    const { ctx, sink } = context(memoryStateStore());
    const r = await walkSite({ site: `${server.origin}/` }, ctx);
    expect(r.status).toBe('unreachable');
    expect(r.reason).toMatch(/^every request was refused: .*robots\.txt: 429 Too Many Requests$/);
    expect(r.pages).toBe(0);
    expect(sink.rows.sites).toEqual([r]);
  });
});

describe('walkSite on a host that never answers', () => {
  it('gives up on the host after its first network failure instead of probing every known path', async () => {
    const server = await opened.server({ '*': () => {} }, { host: '127.0.3.6' });
    const client = opened.track(
      createWebClient({ allowPrivateNetworks: true, retries: 1, requestTimeoutMs: 300 }),
    );
    const sink = memorySink();
    const r = await walkSite(
      { site: `${server.origin}/` },
      { webClient: client, registry: testRegistry(), gate: hostGate(), sink },
    );
    expect(r.status).toBe('unreachable');
    // robots.txt, and at most the first probes already sent with it: not 15 requests.
    expect(server.requests.length).toBeLessThanOrEqual(5);
  });
});

describe('walkSite on a site that gave no answer on its previous run', () => {
  const T1 = Date.parse('2026-11-20T06:00:00Z');
  const T2 = Date.parse('2026-11-21T06:00:00Z');
  const T3 = Date.parse('2026-11-22T06:00:00Z');

  /** A fixture site whose host can be made to accept and never answer. */
  async function flakySite(host: string) {
    const site = new FixtureSite();
    const flags = { hanging: false };
    const server = await opened.server(
      { '*': (req, res) => (flags.hanging ? undefined : site.route(req, res)) },
      { host },
    );
    const home = `${server.origin}/`;
    site.set('/robots.txt', `User-agent: *\nSitemap: ${home}s.xml\n`);
    site.set('/s.xml', urlset([{ loc: `${home}p1` }, { loc: `${home}p2` }]));
    return { site, server, home, flags };
  }

  /** A context whose client waits `requestTimeoutMs` for an answer, and retries once. */
  function ctxAt(
    state: StateStore,
    now: number,
    requestTimeoutMs: number,
    extra: Partial<SiteJobContext> = {},
  ) {
    const client = opened.track(
      createWebClient({ allowPrivateNetworks: true, retries: 1, requestTimeoutMs }),
    );
    const sink = memorySink();
    const ctx: SiteJobContext = {
      webClient: client,
      registry: testRegistry(),
      gate: hostGate(),
      sink,
      state,
      now: () => now,
      probeTimeoutMs: 200,
      ...extra,
    };
    return { ctx, sink };
  }

  it('sends one probe, ends within the probe timeout and says why, while the host still hangs', async () => {
    const { server, home, flags } = await flakySite('127.0.3.20');
    const state = memoryStateStore();
    flags.hanging = true;
    const first = ctxAt(state, T1, 300);
    const r1 = await walkSite({ site: home }, first.ctx);
    expect(r1.status).toBe('unreachable');
    expect((await state.loadSite(home))?.unreachable).toMatchObject({ at: T1, since: T1 });

    // The full policy would wait a minute for robots.txt (and retry): the probe waits 200 ms.
    const sent = server.requests.length;
    const second = ctxAt(state, T2, 60_000, { deadlineMs: 120_000 });
    const r2 = await walkSite({ site: home }, second.ctx);
    expect(r2.status).toBe('unreachable');
    expect(r2.reason).toBe(
      `${home}robots.txt: no answer within 200 ms (one probe only: the site gave no answer on the previous run, at 2026-11-20T06:00:00.000Z)`,
    );
    expect(r2.requests).toBe(1);
    expect(server.requests.slice(sent)).toEqual(['GET /robots.txt']);
    expect(r2.ms).toBeLessThan(30_000);
    expect(second.sink.rows.sites).toEqual([r2]);
    expect((await state.loadSite(home))?.unreachable).toMatchObject({ at: T2, since: T1 });

    // A third run says since when.
    const third = ctxAt(state, T3, 60_000, { deadlineMs: 120_000 });
    const r3 = await walkSite({ site: home }, third.ctx);
    expect(r3.reason).toMatch(/at 2026-11-21T06:00:00.000Z, and none since 2026-11-20T06:00:00.000Z\)$/);
  });

  it('walks a site whose host is back in full, keeping the state it had before it went silent', async () => {
    const { site, home, flags } = await flakySite('127.0.3.21');
    const state = memoryStateStore();
    const r1 = await walkSite({ site: home }, ctxAt(state, T1, 5_000).ctx);
    expect(r1).toMatchObject({ status: 'ok', pages: 2 });

    flags.hanging = true;
    const r2 = await walkSite({ site: home }, ctxAt(state, T2, 300).ctx);
    expect(r2.status).toBe('unreachable');
    expect((await state.loadSite(home))?.sitemaps.map((m) => m.url)).toEqual([
      `${home}robots.txt`,
      `${home}s.xml`,
    ]);

    // Back, with one page changed: the probe answers, then the walk is the usual incremental one.
    flags.hanging = false;
    site.set('/s.xml', urlset([{ loc: `${home}p1` }, { loc: `${home}p2`, lastmod: '2026-11-21' }]));
    site.resetHits();
    const third = ctxAt(state, T3, 5_000);
    const r3 = await walkSite({ site: home }, third.ctx);
    expect(r3).toMatchObject({ status: 'ok', reason: null, pages: 2 });
    expect(third.sink.rows.pages.map((p) => [p.url.slice(home.length), p.change])).toEqual([
      ['p1', 'unchanged'],
      ['p2', 'changed'],
    ]);
    // The probe and the walk's own conditional request.
    expect(site.hitsOf('/robots.txt')).toBe(2);
    expect(site.conditional.get('/robots.txt')).toBe(1);
    expect((await state.loadSite(home))?.unreachable).toBeNull();
  });

  it('walks with the usual policy, no probe, on a full walk', async () => {
    const { server, home, flags } = await flakySite('127.0.3.22');
    const state = memoryStateStore();
    flags.hanging = true;
    await walkSite({ site: home }, ctxAt(state, T1, 300).ctx);
    const sent = server.requests.length;
    // A full walk asked for (`--full`), then one due by `fullEveryMs`: both walk as usual.
    const r = await walkSite({ site: home, full: true }, ctxAt(state, T2, 300).ctx);
    const due = await walkSite({ site: home }, ctxAt(state, T3, 300, { fullEveryMs: 86_400_000 }).ctx);
    for (const x of [r, due]) {
      expect(x.status).toBe('unreachable');
      expect(x.reason).toBe(
        `${home}robots.txt: Request timed out: requestTimeoutMs (300 ms) passed before the response`,
      );
    }
    expect(server.requests.slice(sent).filter((q) => q === 'GET /robots.txt')).toHaveLength(2);
    expect((await state.loadSite(home))?.unreachable).toMatchObject({ at: T3, since: T1 });
  });
});

describe('walkSite and robots.txt', () => {
  it("hands robots.txt's Crawl-delay for * to the gate, for the site's host", async () => {
    const { site, home } = await startSite('127.0.3.7');
    site.set('/robots.txt', `User-agent: *\nCrawl-delay: 0.05\nSitemap: ${home}s.xml\n`);
    site.set('/s.xml', urlset([{ loc: `${home}p` }]));
    const inner = hostGate();
    const delays: [string, number][] = [];
    const gate = {
      acquire: inner.acquire,
      setCrawlDelay(host: string, ms: number) {
        delays.push([host, ms]);
        inner.setCrawlDelay(host, ms);
      },
    };
    const client = opened.track(createWebClient({ allowPrivateNetworks: true, retries: 1 }));
    const r = await walkSite(
      { site: home },
      { webClient: client, registry: testRegistry(), gate, sink: memorySink() },
    );
    expect(r.pages).toBe(1);
    expect(delays).toEqual([['127.0.3.7', 50]]);
  });
});

describe('walkSite with fullEveryMs', () => {
  it('walks in full once the last full walk is that old: no conditional request, no skip, every page out, marked', async () => {
    const { site, home } = await startSite('127.0.3.8');
    const state = memoryStateStore();
    const DAY = 86_400_000;
    const start = Date.UTC(2026, 10, 1);
    const run = async (day: number) => {
      site.resetHits();
      const c = context(state);
      const result = await walkSite(
        { site: home },
        { ...c.ctx, fullEveryMs: 7 * DAY, now: () => start + day * DAY },
      );
      return { result, rows: c.sink.rows };
    };
    const v = { aLastmod: '2026-11-01', bLastmod: '2026-11-01', bPages: ['b1@2026-11-01', 'b2@2026-11-01'] };
    publish(site, home, v);
    await run(0);
    // b.xml's lastmod moves with its body: the site's <lastmod> is honest from now on.
    publish(site, home, { ...v, bLastmod: '2026-11-02', bPages: ['b1@2026-11-02', 'b2@2026-11-01'] });
    await run(1);
    // Day 2, nothing changed: conditional requests, both children skipped, nothing out.
    const incremental = await run(2);
    expect(incremental.rows.pages).toEqual([]);
    expect(incremental.result.skipped).toBe(2);
    expect(site.hitsOf('/a.xml')).toBe(0);
    expect(site.conditional.get('/idx.xml')).toBe(1);

    // Day 8, seven days after the full walk of day 0: validators and skips are not trusted.
    const full = await run(8);
    expect(full.result).toMatchObject({ status: 'ok', notModified: 0, skipped: 0, pages: 4 });
    expect([...site.conditional.keys()]).toEqual([]);
    expect(site.hitsOf('/a.xml')).toBe(1);
    expect(site.hitsOf('/b.xml')).toBe(1);
    expect(full.rows.pages.map((p) => [p.url.slice(home.length), p.change]).sort()).toEqual([
      ['a1', 'unchanged'],
      ['a2', 'unchanged'],
      ['b1', 'unchanged'],
      ['b2', 'unchanged'],
    ]);
    expect(full.rows.sitemaps.every((s) => !s.notModified && !s.skipped)).toBe(true);

    // Day 9: the period runs from day 8's full walk, so this one is incremental again.
    const next = await run(9);
    expect(next.rows.pages).toEqual([]);
    expect(next.result.skipped).toBe(2);
  });
});

describe('walkSite and Google News sitemaps', () => {
  it("never skips a News sitemap on its index <lastmod>, however honest the site's <lastmod>", async () => {
    const { site, home } = await startSite('127.0.3.9');
    const state = memoryStateStore();
    const publishNews = (v: { aLastmod: string; aPages: string[]; stories: string[] }) => {
      site.set('/robots.txt', `User-agent: *\nSitemap: ${home}idx.xml\n`);
      site.set(
        '/idx.xml',
        sitemapIndex([
          { loc: `${home}a.xml`, lastmod: v.aLastmod },
          // News sitemaps change all day; their index entry often says so late or never.
          { loc: `${home}news.xml`, lastmod: '2026-11-01' },
        ]),
      );
      site.set('/a.xml', urlset(v.aPages.map((p) => ({ loc: `${home}${p}`, lastmod: v.aLastmod }))));
      site.set('/news.xml', newsUrlset(v.stories.map((p) => ({ loc: `${home}${p}`, date: '2026-11-01' }))));
    };
    const run = async () => {
      site.resetHits();
      const c = context(state);
      return { result: await walkSite({ site: home }, c.ctx), rows: c.sink.rows };
    };
    publishNews({ aLastmod: '2026-11-01', aPages: ['a1'], stories: ['n1'] });
    const first = await run();
    expect(first.rows.pages.map((p) => p.url.slice(home.length)).sort()).toEqual(['a1', 'n1']);
    // a.xml's lastmod moves with its body: honest.
    publishNews({ aLastmod: '2026-11-02', aPages: ['a1', 'a2'], stories: ['n1'] });
    await run();
    // A new story, the index unchanged: a.xml is skipped, news.xml is asked for and its story comes out.
    publishNews({ aLastmod: '2026-11-02', aPages: ['a1', 'a2'], stories: ['n1', 'n2'] });
    const third = await run();
    expect(site.hitsOf('/a.xml')).toBe(0);
    expect(third.result.skipped).toBe(1);
    expect(site.hitsOf('/news.xml')).toBe(1);
    expect(third.rows.pages.map((p) => [p.url.slice(home.length), p.change])).toEqual([
      ['n1', 'unchanged'],
      ['n2', 'new'],
    ]);
  });
});

describe('walkSite cut short', () => {
  it('is partial when a page budget stops the walk, and the next walk loses nothing', async () => {
    const { site, home } = await startSite('127.0.3.10');
    const state = memoryStateStore();
    publish(site, home, {
      aLastmod: '2026-11-01',
      bLastmod: '2026-11-01',
      bPages: ['b1@2026-11-01', 'b2@2026-11-01'],
    });
    const cut = context(state);
    const r = await walkSite({ site: home }, { ...cut.ctx, walkOptions: { maxPages: 3 } });
    expect(r.status).toBe('partial');
    expect(r.reason).toMatch(/limit of 3 pages/);
    expect(cut.sink.rows.sites).toEqual([r]);
    expect(r.pages).toBeGreaterThan(0);
    expect(r.pages).toBeLessThanOrEqual(3);
    // What the cut walk did not read in full is fetched again, so between them every page came out.
    const next = context(state);
    expect((await walkSite({ site: home }, next.ctx)).status).toBe('ok');
    const seen = new Set(
      [...cut.sink.rows.pages, ...next.sink.rows.pages].map((p) => p.url.slice(home.length)),
    );
    expect([...seen].sort()).toEqual(['a1', 'a2', 'b1', 'b2']);
  });

  it('is partial, with what was read, when the site deadline passes after an answer', async () => {
    const site = new FixtureSite();
    // b.xml never answers: only the site deadline ends the walk.
    const server = await opened.server({ '/b.xml': () => {}, '*': site.route }, { host: '127.0.3.11' });
    const home = `${server.origin}/`;
    publish(site, home, { aLastmod: '2026-11-01', bLastmod: '2026-11-01', bPages: ['b1@2026-11-01'] });
    const client = opened.track(
      createWebClient({ allowPrivateNetworks: true, retries: 1, requestTimeoutMs: 60_000 }),
    );
    const sink = memorySink();
    const r = await walkSite(
      { site: home },
      { webClient: client, registry: testRegistry(), gate: hostGate(), sink, deadlineMs: 500 },
    );
    expect(r.status).toBe('partial');
    expect(r.reason).toMatch(/deadline of 500 ms/);
    expect(sink.rows.pages.map((p) => p.url.slice(home.length))).toEqual(['a1', 'a2']);
    expect(sink.rows.sites).toEqual([r]);
  });
});

describe('walkSite page lines', () => {
  it('hands the sink each marked row with its JSON text, equal to JSON.stringify(row)', async () => {
    const { site, home } = await startSite('127.0.3.12');
    site.set('/robots.txt', `User-agent: *\nSitemap: ${home}n.xml\n`);
    site.set(
      '/n.xml',
      newsUrlset([{ loc: `${home}caf%C3%A9?q="x"&amp;y=\u00e9`, date: '2026-11-01T10:00:00+02:00' }]),
    );
    const inner = memorySink();
    const lines: [string, string | undefined][] = [];
    const sink = {
      begin(s: string) {
        const out = inner.begin(s);
        return {
          ...out,
          page: (row: Parameters<typeof out.page>[0], json?: string) => {
            lines.push([JSON.stringify(row), json]);
            out.page(row, json);
          },
        };
      },
    };
    const client = opened.track(createWebClient({ allowPrivateNetworks: true, retries: 1 }));
    const r = await walkSite(
      { site: home },
      { webClient: client, registry: testRegistry(), gate: hostGate(), sink, state: memoryStateStore() },
    );
    expect(r.pages).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0][1]).toBe(lines[0][0]);
    expect(JSON.parse(lines[0][0])).toMatchObject({
      change: 'new',
      newsStory: { title: expect.any(String) },
    });
  });
});

describe('walkSite and its connections', () => {
  it("closes the site's idle connections when it ends, not at the client's keep-alive timeout", async () => {
    const site = new FixtureSite();
    const sockets = new Set<import('node:net').Socket>();
    const server = await opened.server(
      {
        '*': (req, res) => {
          sockets.add(req.socket);
          return site.route(req, res);
        },
      },
      { host: '127.0.3.40' },
    );
    const home = `${server.origin}/`;
    publish(site, home, { aLastmod: '2026-11-01', bLastmod: '2026-11-01', bPages: ['b1@2026-11-01'] });
    // Kept a minute unless the job closes them.
    const client = opened.track(
      createWebClient({ allowPrivateNetworks: true, retries: 1, keepAliveTimeoutMs: 60_000 }),
    );
    const ctx: SiteJobContext = {
      webClient: client,
      registry: testRegistry(),
      gate: hostGate(),
      sink: memorySink(),
      state: null,
    };
    expect(await walkSite({ site: home }, ctx)).toMatchObject({ status: 'ok', pages: 3 });
    expect(sockets.size).toBeGreaterThan(0);
    const guard = new Promise<'kept'>((resolve) => setTimeout(() => resolve('kept'), 3_000).unref());
    const closed = await Promise.race([
      Promise.all([...sockets].map((s) => (s.destroyed ? null : once(s, 'close')))).then(() => 'closed'),
      guard,
    ]);
    expect(closed).toBe('closed');
    // The client still serves the host.
    expect(await walkSite({ site: home }, ctx)).toMatchObject({ status: 'ok', pages: 3 });
  });
});
