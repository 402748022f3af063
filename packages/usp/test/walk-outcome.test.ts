import { sitemapToJSON, sitemapTreeForHomepageWithClient, walkPagesWithClient } from '@usp-ts/core';
import { OpenedResources } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { robots, TEXT, testClient, treeOptions, urlset, XML } from './tree-helpers.js';

// How a walk ended, on the tree's root and on a page walk: ok, unreachable or partial.

const opened = new OpenedResources();
const client = (extra: Parameters<typeof testClient>[0] = {}) => opened.track(testClient(extra));

afterEach(() => opened.closeAll());

const never = () => {};

async function smallSite() {
  const s = await opened.server();
  const o = s.origin;
  s.route('/robots.txt', { headers: TEXT, body: robots([`${o}/a.xml`, `${o}/b.xml`]) });
  s.route('/a.xml', { headers: XML, body: urlset([`${o}/1`, `${o}/2`]) });
  s.route('/b.xml', { headers: XML, body: urlset([`${o}/3`]) });
  return s;
}

describe('walk outcome', () => {
  it('ok: everything found was fetched, 404s included; the JSON root carries it', async () => {
    const s = await smallSite();
    const tree = await sitemapTreeForHomepageWithClient(`${s.origin}/`, treeOptions(client()));
    expect(tree.summary).toEqual({ outcome: 'ok', reason: null, stoppedBy: null, unreachableOrigins: [] });
    const json = sitemapToJSON(tree);
    expect(json.outcome).toBe('ok');
    expect(json.outcomeReason).toBeUndefined();
  });

  it('ok: a site that answers 404 everywhere was reached', async () => {
    const s = await opened.server();
    const tree = await sitemapTreeForHomepageWithClient(`${s.origin}/`, treeOptions(client()));
    expect(tree.summary.outcome).toBe('ok');
  });

  it('partial: a budget cut the walk after something was read, and the reason names it', async () => {
    const s = await smallSite();
    const tree = await sitemapTreeForHomepageWithClient(
      `${s.origin}/`,
      treeOptions(client(), { maxSitemaps: 2, useKnownPaths: false }),
    );
    expect(tree.summary).toMatchObject({
      outcome: 'partial',
      stoppedBy: 'maxSitemaps',
      reason: "the walk's limit of 2 sitemaps was reached",
    });
    expect(sitemapToJSON(tree)).toMatchObject({
      outcome: 'partial',
      outcomeReason: expect.stringContaining('2 sitemaps'),
    });
  });

  it('unreachable: the deadline passed before any response (not "a site without sitemaps")', async () => {
    const s = await opened.server({ '/robots.txt': never });
    const tree = await sitemapTreeForHomepageWithClient(
      `${s.origin}/`,
      treeOptions(client(), { deadlineMs: 150 }),
    );
    expect(tree.summary).toMatchObject({
      outcome: 'unreachable',
      stoppedBy: 'deadline',
      reason: "the walk's deadline of 150 ms passed",
    });
  });

  for (const status of [429, 503]) {
    it(`unreachable: every request answered ${status} (refused: served nothing), the reason names it`, async () => {
      const s = await opened.server({ '*': { status, body: 'later' } });
      const tree = await sitemapTreeForHomepageWithClient(`${s.origin}/`, treeOptions(client()));
      expect(tree.summary).toMatchObject({ outcome: 'unreachable', stoppedBy: null });
      expect(tree.summary.reason).toMatch(
        new RegExp(`^every request was refused: ${s.origin}/robots\\.txt: ${status} `),
      );
    });
  }

  it('unreachable: robots.txt 429 with a Retry-After beyond the cap, the rest refused too', async () => {
    const s = await opened.server({ '*': { status: 429, headers: { 'Retry-After': '3600' }, body: '' } });
    const tree = await sitemapTreeForHomepageWithClient(`${s.origin}/`, treeOptions(client()));
    expect(tree.summary.outcome).toBe('unreachable');
    expect(tree.summary.reason).toContain('429 Too Many Requests');
  });

  it('ok: refusals next to any other answer (robots.txt 503, known paths 404) mean the site was reached', async () => {
    const s = await opened.server({ '/robots.txt': { status: 503, body: 'later' } });
    const tree = await sitemapTreeForHomepageWithClient(`${s.origin}/`, treeOptions(client()));
    expect(tree.summary.outcome).toBe('ok');
  });

  it('partial, not unreachable: an abort before any response (the caller stopped it, not the site)', async () => {
    const s = await opened.server({ '/robots.txt': never });
    const ctl = new AbortController();
    const walk = walkPagesWithClient(`${s.origin}/`, treeOptions(client(), { signal: ctl.signal }));
    const pages = (async () => {
      for await (const _ of walk);
    })();
    while (s.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    ctl.abort();
    await pages;
    expect(walk.summary).toMatchObject({
      outcome: 'partial',
      stoppedBy: 'aborted',
      reason: 'the walk was aborted',
    });
  });

  it('partial: an already aborted signal, which sends no request', async () => {
    const s = await opened.server({ '/robots.txt': never });
    const tree = await sitemapTreeForHomepageWithClient(
      `${s.origin}/`,
      treeOptions(client(), { signal: AbortSignal.abort() }),
    );
    expect(tree.summary).toMatchObject({ outcome: 'partial', stoppedBy: 'aborted' });
    expect(s.requests).toEqual([]);
  });

  it('a page walk has no summary until it ends, then the same as the tree', async () => {
    const s = await smallSite();
    const walk = walkPagesWithClient(
      `${s.origin}/`,
      treeOptions(client(), { maxPages: 1, useKnownPaths: false }),
    );
    expect(walk.summary).toBeNull();
    let n = 0;
    for await (const _ of walk) n++;
    expect(n).toBe(1);
    expect(walk.summary).toMatchObject({ outcome: 'partial', stoppedBy: 'maxPages' });
  });
});
