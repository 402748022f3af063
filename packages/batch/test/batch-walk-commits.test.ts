import { createWebClient } from '@usp-ts/fetcher';
import { OpenedResources } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { batchWalk } from '../src/batch-walk.js';
import { memorySink } from '../src/memory-sink.js';
import { OutputError } from '../src/output-error.js';
import type { BatchProgress } from '../src/progress.js';
import type { SiteResult } from '../src/rows.js';
import type { CommitOptions, SiteSink } from '../src/site-sink.js';
import { FixtureSite, testRegistry, urlset } from './fixture-sites.js';

const opened = new OpenedResources();
afterEach(() => opened.closeAll());

/** A one-urlset site on its own loopback address, with `pages` pages. */
async function site(host: string, pages = 1): Promise<string> {
  const fixture = new FixtureSite();
  const server = await opened.server({ '*': fixture.route }, { host });
  const home = `${server.origin}/`;
  fixture.set('/robots.txt', `Sitemap: ${home}a.xml\n`);
  fixture.set('/a.xml', urlset(Array.from({ length: pages }, (_, i) => ({ loc: `${home}p${i}` }))));
  return home;
}

const client = () => opened.track(createWebClient({ allowPrivateNetworks: true, retries: 1 }));

/**
 * A memory sink whose commits wait for `hold(site)` (when it gives a promise) before they are
 * kept; `log` says when each site's output began and when its commit was called and ended.
 */
function heldSink(hold: (site: string) => Promise<void> | undefined) {
  const inner = memorySink();
  const log: string[] = [];
  const sink: SiteSink = {
    begin(s) {
      log.push(`begin ${s}`);
      const out = inner.begin(s);
      return {
        ...out,
        async commit(result: SiteResult, options?: CommitOptions) {
          log.push(`commit ${s}`);
          await hold(s);
          await out.commit(result, options);
          log.push(`kept ${s}`);
        },
      };
    },
  };
  return { sink, inner, log };
}

/** Something that takes many turns of the event loop: a request to a server of its own. */
async function roundTrip(): Promise<void> {
  const server = await opened.server(
    {
      '/': (_req, res) => {
        res.end('ok');
      },
    },
    { host: '127.0.8.9' },
  );
  await (await fetch(`${server.origin}/`)).text();
}

describe("batchWalk while a site's commit is in flight", () => {
  it('starts the next site, reports each site once its commit ended, and ends only when every commit has', async () => {
    const [a, b, c] = await Promise.all(['127.0.8.1', '127.0.8.2', '127.0.8.3'].map((h) => site(h)));
    let releaseA = () => {};
    const heldA = new Promise<void>((resolve) => {
      releaseA = resolve;
    });
    // a's commit is kept only once b's has been called: b was walked while a's was in flight.
    const { sink, inner, log } = heldSink((s) => {
      if (s === b) releaseA();
      return s === a ? heldA : undefined;
    });
    const reported: string[] = [];
    let last: BatchProgress | null = null;
    for await (const r of batchWalk([a, b, c], {
      webClient: client(),
      registry: testRegistry(),
      sink,
      sites: 1,
      onProgress: (p) => {
        last = p;
      },
    })) {
      // Reported only once kept.
      expect(log).toContain(`kept ${r.site}`);
      reported.push(r.site);
    }
    expect(log.indexOf(`begin ${b}`)).toBeLessThan(log.indexOf(`kept ${a}`));
    expect(reported.sort()).toEqual([a, b, c].sort());
    expect(inner.rows.sites.map((r) => r.site).sort()).toEqual([a, b, c].sort());
    const p = last as unknown as BatchProgress;
    expect(p.sitesDone).toBe(3);
    expect(p.statuses).toEqual({ ok: 3 });
    expect(p.sitesActive).toBe(0);
  });

  it('gives up at most `sites` places to commits in flight', async () => {
    const [a, b, c] = await Promise.all(['127.0.8.4', '127.0.8.5', '127.0.8.6'].map((h) => site(h)));
    let releaseA = () => {};
    const heldA = new Promise<void>((resolve) => {
      releaseA = resolve;
    });
    const { sink, log } = heldSink((s) => {
      if (s === a) return heldA;
      if (s !== b) return undefined;
      // b's commit is in flight beside a's: c waits for one of them, however long they take.
      return roundTrip().then(() => {
        log.push('release a');
        releaseA();
      });
    });
    for await (const _ of batchWalk([a, b, c], {
      webClient: client(),
      registry: testRegistry(),
      sink,
      sites: 1,
    })) {
      // drained
    }
    expect(log.indexOf(`begin ${b}`)).toBeLessThan(log.indexOf('release a'));
    expect(log.indexOf(`begin ${c}`)).toBeGreaterThan(log.indexOf('release a'));
  });

  it('keeps the place of a site whose commit holds more than 1,000 page rows', async () => {
    const [a, b] = await Promise.all([site('127.0.8.10', 1001), site('127.0.8.11')]);
    const { sink, log } = heldSink((s) =>
      s === a
        ? roundTrip().then(() => {
            log.push('release a');
          })
        : undefined,
    );
    for await (const _ of batchWalk([a, b], {
      webClient: client(),
      registry: testRegistry(),
      sink,
      sites: 1,
    })) {
      // drained
    }
    expect(log.indexOf(`begin ${b}`)).toBeGreaterThan(log.indexOf('release a'));
  });

  it("fails the run with a commit's error after the next site started, stopping it, as a commit that held its place did", async () => {
    const [a, b] = await Promise.all(['127.0.8.7', '127.0.8.8'].map((h) => site(h)));
    const broken = new OutputError('disk full', '/out');
    let bBegun = () => {};
    const began = new Promise<void>((resolve) => {
      bBegun = resolve;
    });
    const { sink, inner, log } = heldSink((s) => {
      if (s === b) return undefined;
      // a's commit fails once b's walk has begun.
      return began.then(() => Promise.reject(broken));
    });
    const begin = sink.begin.bind(sink);
    sink.begin = (s) => {
      if (s === b) bBegun();
      return begin(s);
    };
    const yielded: string[] = [];
    await expect(
      (async () => {
        for await (const r of batchWalk([a, b], {
          webClient: client(),
          registry: testRegistry(),
          sink,
          sites: 1,
        })) {
          yielded.push(r.site);
        }
      })(),
    ).rejects.toBe(broken);
    expect(yielded).toEqual([]);
    // b was walking when a's commit failed: stopped, nothing of it kept.
    expect(log).toContain(`begin ${b}`);
    expect(inner.rows.sites).toEqual([]);
  });
});
