import { createWebClient } from '@usp-ts/fetcher';
import { OpenedResources } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { batchWalk } from '../src/batch-walk.js';
import { memorySink } from '../src/memory-sink.js';
import { memoryStateStore } from '../src/memory-state-store.js';
import { readSiteLines } from '../src/site-list.js';
import { startFirst } from '../src/start-first.js';
import { FixtureSite, testRegistry, urlset } from './fixture-sites.js';

const opened = new OpenedResources();
afterEach(() => opened.closeAll());

const site = (n: number) => `http://s${n}.example/`;

async function order(lines: string[], first: string[], lookAhead?: number): Promise<string[]> {
  const out: string[] = [];
  for await (const l of startFirst(readSiteLines(lines), new Set(first), lookAhead)) {
    out.push(l.kind === 'site' ? l.site : `invalid:${l.text}`);
  }
  return out;
}

describe('startFirst', () => {
  it('moves the sites to start first ahead of the lines before them, the rest in list order', async () => {
    const list = [1, 2, 3, 4, 5, 6].map(site);
    expect(await order(list, [site(5), site(3)])).toEqual([3, 5, 1, 2, 4, 6].map(site));
  });

  it('keeps invalid lines and everything else in order, and passes lines through once none is wanted', async () => {
    const list = [site(1), 'not a url', site(2), site(3)];
    expect(await order(list, [site(3), 'http://elsewhere.example/'])).toEqual([
      site(3),
      site(1),
      'invalid:not a url',
      site(2),
    ]);
    expect(await order(list, [])).toEqual([site(1), 'invalid:not a url', site(2), site(3)]);
  });

  it('looks only lookAhead lines ahead of the next line to start', async () => {
    const list = [1, 2, 3, 4, 5, 6].map(site);
    // Two lines held ahead: site 6 is read when site 5 is, and goes before it.
    expect(await order(list, [site(6)], 2)).toEqual([1, 2, 3, 4, 6, 5].map(site));
  });

  it('stops reading ahead once every site to start first was found', async () => {
    let read = 0;
    function* lines() {
      for (let i = 1; i <= 100; i++) {
        read++;
        yield site(i);
      }
    }
    const it = startFirst(readSiteLines(lines()), new Set([site(3)]), 50);
    expect((await it.next()).value).toMatchObject({ site: site(3) });
    expect((await it.next()).value).toMatchObject({ site: site(1) });
    expect(read).toBe(3);
    await it.return(undefined);
  });
});

describe('batchWalk with a state', () => {
  it('starts a site that gave no answer last time before the sites listed ahead of it', async () => {
    const fixture = new FixtureSite();
    const server = await opened.server({ '*': fixture.route }, { host: '127.0.6.1' });
    const home = `${server.origin}/`;
    fixture.set('/robots.txt', `Sitemap: ${home}a.xml\n`);
    fixture.set('/a.xml', urlset([{ loc: `${home}p1` }]));
    // Port 9 (discard) on a loopback address nobody listens on: refused, as on the previous run.
    const dead = 'http://127.0.6.2:9/';
    const state = memoryStateStore();
    await state.saveSite({
      site: dead,
      walkedAt: 1,
      fullWalkAt: 1,
      probedAt: 0,
      lastmodTrust: 0,
      unreachable: { at: 1, since: 1, reason: 'refused' },
      sitemaps: [],
    });
    const client = opened.track(createWebClient({ allowPrivateNetworks: true, retries: 1 }));
    const sites: string[] = [];
    for await (const r of batchWalk([home, dead], {
      webClient: client,
      registry: testRegistry(),
      sink: memorySink(),
      state,
      sites: 1,
      probeTimeoutMs: 5_000,
    })) {
      sites.push(r.site);
    }
    // One site at a time: results come in the order the sites started.
    expect(sites).toEqual([dead, home]);
  });
});
