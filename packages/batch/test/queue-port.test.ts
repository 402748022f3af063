import { createWebClient } from '@usp-ts/fetcher';
import { OpenedResources } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { batchWalk } from '../src/batch-walk.js';
import { memorySiteQueue } from '../src/memory-queue.js';
import { memorySink } from '../src/memory-sink.js';
import { memoryStateStore } from '../src/memory-state-store.js';
import { runSiteQueue, type SiteQueue, type TryOutcome } from '../src/queue-port.js';
import type { SiteSink } from '../src/site-sink.js';
import type { StateStore } from '../src/state-store.js';
import { FixtureSite, testRegistry, urlset } from './fixture-sites.js';

// The queue port is enough for a runner: the reference engine (in memory) runs the same runner
// as BullMQ's adapter, in-process, and gives the local batch's pages, each once, through a
// retried try and a released one.

const opened = new OpenedResources();
afterEach(() => opened.closeAll());

/** `n` sites of three pages; `hold`, while it waits, keeps their robots.txt from answering. */
async function sites(
  n: number,
  hold?: () => Promise<void>,
): Promise<{ homes: string[]; pages: Set<string> }> {
  const homes: string[] = [];
  const pages = new Set<string>();
  for (let i = 0; i < n; i++) {
    const fixture = new FixtureSite();
    const route = async (
      req: Parameters<FixtureSite['route']>[0],
      res: Parameters<FixtureSite['route']>[1],
    ) => {
      if (hold !== undefined && req.url === '/robots.txt') await hold();
      await fixture.route(req, res);
    };
    const server = await opened.server({ '*': route }, { host: `127.0.9.${i + 1}` });
    const home = `${server.origin}/`;
    const urls = [1, 2, 3].map((k) => `${home}p${k}`);
    for (const u of urls) pages.add(u);
    fixture.set('/robots.txt', `Sitemap: ${home}a.xml\n`);
    fixture.set('/a.xml', urlset(urls.map((loc) => ({ loc }))));
    homes.push(home);
  }
  return { homes, pages };
}

const client = () => opened.track(createWebClient({ allowPrivateNetworks: true, retries: 1 }));

/** A state whose save fails the first time for `site`: that try kept its rows, then failed. */
function failingSaveOf(site: string): StateStore {
  const state = memoryStateStore();
  const saveSite = state.saveSite.bind(state);
  let left = 1;
  (state as { saveSite: typeof saveSite }).saveSite = async (s, mark) => {
    if (left > 0 && s.site === site) {
      left--;
      throw new Error('state store unreachable');
    }
    return saveSite(s, mark);
  };
  return state;
}

describe('the queue port, with the in-memory engine', () => {
  it("runs the batch's runner: the local batch's pages, each once, a failed try's copy made void by the next", async () => {
    const { homes, pages } = await sites(4);
    const queue = memorySiteQueue({ stopWhenIdle: true });
    expect(await queue.enqueue(homes.map((site) => ({ site })))).toBe(4);
    // Idempotent: the sites waiting are not added twice.
    expect(await queue.enqueue([{ site: homes[0] }])).toBe(0);
    const sink = memorySink('queued');
    const consumer = runSiteQueue(queue, {
      webClient: client(),
      registry: testRegistry(),
      sink,
      state: failingSaveOf(homes[1]),
      sites: 2,
      name: 'mem',
    });
    await consumer.closed;
    expect([...queue.results.keys()].sort()).toEqual([...homes].sort());
    expect([...queue.results.values()].every((r) => r.status === 'ok')).toBe(true);
    // Site 1's first try kept its rows and failed; its second try voided that copy.
    const urls = sink.rows.pages.map((p) => p.url);
    expect(urls.length).toBe(pages.size);
    expect(new Set(urls)).toEqual(pages);
    expect(sink.rows.sites.map((r) => r.site).sort()).toEqual([...homes].sort());

    const local = memorySink('local');
    for await (const _ of batchWalk(homes, { webClient: client(), registry: testRegistry(), sink: local })) {
      // rows go to the sink
    }
    expect(new Set(local.rows.pages.map((p) => p.url))).toEqual(new Set(urls));
  });

  it('a stopped runner releases the sites it was walking: another runner walks them from the start', async () => {
    let asked!: () => void;
    const robotsAsked = new Promise<void>((resolve) => {
      asked = resolve;
    });
    let held = true;
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { homes, pages } = await sites(2, async () => {
      if (!held) return;
      asked();
      await released;
    });
    let ended!: () => void;
    const allEnded = new Promise<void>((resolve) => {
      ended = resolve;
    });
    const queue = memorySiteQueue({ onResult: () => queue.results.size === 2 && ended() });
    await queue.enqueue(homes.map((site) => ({ site })));
    const first = memorySink('first');
    const stuck = runSiteQueue(queue, {
      webClient: client(),
      registry: testRegistry(),
      sink: first,
      sites: 2,
    });
    await robotsAsked;
    const stopped = stuck.stop();
    held = false;
    await stopped;
    release();
    expect(first.rows.sites).toEqual([]);
    expect(queue.results.size).toBe(0);
    const second = memorySink('second');
    const runner = runSiteQueue(queue, { webClient: client(), registry: testRegistry(), sink: second });
    await allEnded;
    await runner.stop();
    expect(new Set(second.rows.pages.map((p) => p.url))).toEqual(pages);
  });

  it("fails a try whose copy the engine refused, even when it was keeping the site's error row", async () => {
    const { homes } = await sites(1);
    const sink = memorySink('refused');
    // Page rows that cannot be written (not an output failure): the site becomes its error row,
    // and that row's commit asks the engine to confirm the lease.
    const failing: SiteSink = {
      begin(site, options) {
        const output = sink.begin(site, options);
        return {
          ...output,
          page: () => {
            throw new Error('page row refused');
          },
        };
      },
    };
    const lost = new Error('lease lost');
    let outcome: Promise<TryOutcome> | undefined;
    const queue: SiteQueue = {
      enqueue: async () => 0,
      consume(walk) {
        const lease = { signal: new AbortController().signal, confirm: () => Promise.reject(lost) };
        outcome = walk({ site: homes[0] }, lease);
        return { stop: async () => {}, closed: Promise.resolve() };
      },
    };
    runSiteQueue(queue, { webClient: client(), registry: testRegistry(), sink: failing, sites: 1 });
    await expect(outcome).rejects.toBe(lost);
    expect(sink.rows.sites).toEqual([]);
  });
});
