import {
  InvalidOptionError,
  KNOWN_SITEMAP_PATHS,
  OriginBreaker,
  sitemapTreeForHomepageWithClient,
  type Warning,
  walkPagesWithClient,
} from '@usp-ts/core';
import { OpenedResources } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { outline, robots, TEXT, testClient, treeOptions, urlset, XML } from './tree-helpers.js';

// The walk's per-origin breaker against real servers on 127.0.0.1: requests are counted, never
// timed, and every limit is a short configured one.

const opened = new OpenedResources();
const client = (extra: Parameters<typeof testClient>[0] = {}) => opened.track(testClient(extra));

afterEach(() => opened.closeAll());

const reset = (req: { socket: { destroy(): void } }) => req.socket.destroy();

describe('origin breaker: a host that gives no response', () => {
  it('tries robots.txt twice, then sends the host nothing more and says why once', async () => {
    const s = await opened.server({ '/robots.txt': reset });
    const warnings: Warning[] = [];
    const tree = await sitemapTreeForHomepageWithClient(
      `${s.origin}/`,
      treeOptions(client({ retries: 5 }), { onWarning: (w) => warnings.push(w) }),
    );
    // networkAttempts (2) for robots.txt; the 14 known paths (404 here) are never requested.
    expect(s.requests).toEqual(['GET /robots.txt', 'GET /robots.txt']);
    expect(tree.summary.outcome).toBe('unreachable');
    expect(tree.summary.reason).toMatch(new RegExp(`^${s.origin}/robots.txt: \\S`));
    expect(tree.summary.unreachableOrigins).toEqual([s.origin]);
    expect(warnings.filter((w) => w.code === 'unreachable')).toHaveLength(1);
  });

  it('without the breaker every known path is still requested', async () => {
    const s = await opened.server({ '/robots.txt': reset });
    await sitemapTreeForHomepageWithClient(
      `${s.origin}/`,
      treeOptions(client({ retries: 5 }), { originBreaker: false }),
    );
    expect(s.requests.filter((r) => r === 'GET /robots.txt')).toHaveLength(2);
    expect(s.requests).toHaveLength(2 + 14);
  });

  it('stops retries already under way once the origin is given up', async () => {
    const s = await opened.server();
    const o = s.origin;
    const held: { destroy(): void }[] = [];
    // b.xml's first attempt is held until a.xml's last one arrives: b is mid-request when a ends.
    s.route('/b.xml', (req) => {
      held.push(req.socket);
      if (s.requests.filter((r) => r === 'GET /a.xml').length >= 5)
        for (const h of held.splice(0)) h.destroy();
    });
    s.route('/a.xml', (req) => {
      req.socket.destroy();
      if (s.requests.filter((r) => r === 'GET /a.xml').length >= 5)
        for (const h of held.splice(0)) h.destroy();
    });
    s.route('/robots.txt', { headers: TEXT, body: robots([`${o}/a.xml`, `${o}/b.xml`]) });
    const breaker = new OriginBreaker();
    await sitemapTreeForHomepageWithClient(
      `${o}/`,
      treeOptions(client({ retries: 5, networkAttempts: 5, baseDelayMs: 40, maxDelayMs: 40 }), {
        useKnownPaths: false,
        originBreaker: breaker,
      }),
    );
    expect(s.requests.filter((r) => r === 'GET /a.xml')).toHaveLength(5);
    // Without the breaker b.xml would be tried 5 times too; its retry is cancelled once a.xml gave up.
    expect(s.requests.filter((r) => r === 'GET /b.xml')).toHaveLength(1);
    expect(breaker.state(`${o}/x`)).toBe('open');
  });

  it('a sitemap host that fails does not stop the rest of the site', async () => {
    const site = await opened.server();
    const dead = await opened.server({ '/a.xml': reset, '/b.xml': reset });
    const o = site.origin;
    const d = dead.origin;
    site.route('/robots.txt', { headers: TEXT, body: robots([`${d}/a.xml`, `${d}/b.xml`, `${o}/ok.xml`]) });
    site.route('/ok.xml', { headers: XML, body: urlset([`${o}/page`]) });
    const tree = await sitemapTreeForHomepageWithClient(
      `${o}/`,
      treeOptions(client(), { useKnownPaths: false, concurrency: 1 }),
    );
    const lines = outline(tree);
    expect(lines[2]).toMatch(
      new RegExp(`^    InvalidSitemap ${d}/a.xml :: Unable to fetch sitemap from ${d}/a.xml: \\S`),
    );
    expect(lines[3]).toMatch(
      new RegExp(
        `^    InvalidSitemap ${d}/b.xml :: Unable to fetch sitemap from ${d}/b.xml: host unreachable: ${d}/a.xml: \\S`,
      ),
    );
    expect(lines[4]).toBe(`    PagesXMLSitemap ${o}/ok.xml (1)`);
    expect(dead.requests).toEqual(['GET /a.xml', 'GET /a.xml']);
    expect(tree.summary.outcome).toBe('ok');
    expect(tree.summary.unreachableOrigins).toEqual([d]);
  });
});

describe('origin breaker: a host that answers 429 to everything', () => {
  it('retries the first document, then one attempt each, then nothing', async () => {
    const s = await opened.server();
    const busy = { status: 429, headers: { 'Retry-After': '0' } };
    s.route('/robots.txt', busy);
    for (const p of KNOWN_SITEMAP_PATHS) s.route(`/${p}`, busy);
    const tree = await sitemapTreeForHomepageWithClient(`${s.origin}/`, treeOptions(client({ retries: 5 })));
    // robots.txt: 5 attempts. Then at most one attempt per known path, and only until 3
    // documents in a row were throttled: 4 in flight, plus the one started when the first ended.
    expect(s.requests.filter((r) => r === 'GET /robots.txt')).toHaveLength(5);
    const known = s.requests.filter((r) => r !== 'GET /robots.txt');
    expect(new Set(known).size).toBe(known.length);
    expect(known.length).toBeLessThanOrEqual(5);
    expect(s.requests.length).toBeLessThanOrEqual(20);
    // Refusals only: the site served nothing, which is not a site without sitemaps.
    expect(tree.summary.outcome).toBe('unreachable');
    expect(tree.summary.unreachableOrigins).toEqual([s.origin]);
  });

  it('an answer in between ends the streak: retries come back', () => {
    const b = new OriginBreaker({ openAfterThrottledDocuments: 2 });
    const u = 'http://example.com/a.xml';
    b.record(u, { kind: 'error', status: 503, code: 'http-status', message: '503' });
    expect(b.state(u)).toBe('no-retries');
    expect(b.mayRetry('http://example.com/other.xml')).toBe(false);
    b.record(u, { kind: 'ok', status: 200 });
    expect(b.state(u)).toBe('closed');
    b.record(u, { kind: 'error', status: 429, code: 'http-status', message: '429' });
    expect(b.state(u)).toBe('no-retries');
    b.record(u, { kind: 'error', status: 429, code: 'http-status', message: '429' });
    expect(b.state(u)).toBe('open');
    expect(b.refusal('HTTP://EXAMPLE.COM:80/b.xml')).toBe(`host unreachable: ${u}: 503`);
  });
});

describe('origin breaker: options', () => {
  it('checks its thresholds early, with units in their names', () => {
    expect(() => new OriginBreaker({ openAfterFailedDocuments: 0 })).toThrow(InvalidOptionError);
    expect(() => new OriginBreaker({ openAfterFailedDocument: 2 } as never)).toThrow(
      /openAfterFailedDocuments/,
    );
    const c = client();
    expect(() =>
      walkPagesWithClient(
        'http://127.0.0.1:9/',
        treeOptions(c, { originBreaker: { openAfterThrottledDocuments: 1.5 } }),
      ),
    ).toThrow(InvalidOptionError);
  });

  it('a blocked address or a 404 never opens an origin', () => {
    const b = new OriginBreaker();
    const u = 'http://10.0.0.1/a.xml';
    b.record(u, { kind: 'error', status: null, code: 'blocked', message: 'Refused' });
    b.record(u, { kind: 'error', status: 404, code: 'http-status', message: '404 Not Found' });
    expect(b.state(u)).toBe('closed');
    expect(b.refusal(u)).toBeNull();
  });
});
