import { describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../src/contract/errors.js';
import { sitemapToJSON } from '../src/contract/json.js';
import { createRegistry, type Registry, type RegistryLoader } from '../src/contract/registry.js';
import type { InvalidSitemap } from '../src/contract/sitemap.js';
import { headerLookup, type WebClient, type WebResponse } from '../src/contract/web-client.js';
import type { TreeOptions } from '../src/walk/options.js';
import { sitemapTreeForHomepageWithClient } from '../src/walk/tree.js';
import { SITEMAP_NS, tinyIndex, tinyRobots, tinyText, tinyUrlset, urlsetXml } from './tiny-formats.js';

// A walk given a RegistryLoader parses exactly as with the registry it loads, and loads it only
// when it has a document to parse: `usp batch` relies on that to leave the format packages
// unloaded in a run where every answer is a 304.

const H = 'http://example.com/';

/** Answers from a table: a body (200), `304`, anything else 404. */
function tableClient(routes: Record<string, string | 304>): WebClient & { requests: string[] } {
  const requests: string[] = [];
  return {
    requests,
    async get(url): Promise<WebResponse> {
      requests.push(url);
      const route = routes[url];
      if (route === 304) return { kind: 'not-modified', url, headers: headerLookup({}) };
      if (route === undefined) {
        return {
          kind: 'error',
          url,
          status: 404,
          message: '404 Not Found',
          code: 'http-status',
          retryable: false,
        };
      }
      const bytes = new TextEncoder().encode(route);
      return {
        kind: 'ok',
        status: 200,
        statusText: 'OK',
        url,
        headers: headerLookup({ 'content-type': url.endsWith('.txt') ? 'text/plain' : 'application/xml' }),
        body: (async function* () {
          yield bytes;
        })(),
        cancel: () => {},
      };
    },
  };
}

const formats = (): Registry => createRegistry([tinyRobots(), tinyText(), tinyUrlset(), tinyIndex()]);

/** Counts its calls; each call builds the registry anew, as a loader that imports would. */
function countingLoader(load: () => Promise<Registry> = async () => formats()): RegistryLoader & {
  calls: number;
} {
  const loader = Object.assign(
    () => {
      loader.calls++;
      return load();
    },
    { calls: 0 },
  );
  return loader;
}

const SITE = {
  [`${H}robots.txt`]: `User-agent: *\nSitemap: ${H}index.xml\n`,
  [`${H}index.xml`]: `<sitemapindex xmlns="${SITEMAP_NS}"><sitemap><loc>${H}a.xml</loc></sitemap><sitemap><loc>${H}b.txt</loc></sitemap></sitemapindex>`,
  [`${H}a.xml`]: urlsetXml([`${H}p1`, `${H}p2`]),
  [`${H}b.txt`]: `${H}p3\n${H}p4\n`,
};

const walk = (routes: Record<string, string | 304>, registry: TreeOptions['registry']) =>
  sitemapTreeForHomepageWithClient(H, { webClient: tableClient(routes), registry, useKnownPaths: false });

describe('a RegistryLoader in place of a registry', () => {
  it('gives the same tree as the registry it loads, loading it once a walk', async () => {
    const loader = countingLoader();
    const eager = await walk(SITE, formats());
    const lazy = await walk(SITE, loader);
    expect(sitemapToJSON(lazy)).toEqual(sitemapToJSON(eager));
    // Four documents parsed, one load.
    expect([...lazy.allPages()].map((p) => p.url)).toEqual([`${H}p1`, `${H}p2`, `${H}p3`, `${H}p4`]);
    expect(loader.calls).toBe(1);
  });

  it('is never called by a walk that parses nothing (every answer a 304 or an error)', async () => {
    const loader = countingLoader();
    const client = tableClient({ [`${H}robots.txt`]: 304 });
    const tree = await sitemapTreeForHomepageWithClient(H, { webClient: client, registry: loader });
    expect(client.requests.length).toBeGreaterThan(1);
    expect(loader.calls).toBe(0);
    expect(tree.subSitemaps).toEqual([]);
  });

  it('that rejects fails each document as a parser error does: an InvalidSitemap, and the walk goes on', async () => {
    const loader = countingLoader(() => Promise.reject(new Error('formats missing')));
    // Sitemaps given are kept when they fail (discovered ones would be dropped).
    const tree = await sitemapTreeForHomepageWithClient(H, {
      webClient: tableClient(SITE),
      registry: loader,
      sitemaps: [`${H}a.xml`, `${H}b.txt`],
    });
    expect(tree.subSitemaps.map((s) => (s as InvalidSitemap).reason)).toEqual([
      `Unable to parse sitemap from ${H}a.xml: formats missing`,
      `Unable to parse sitemap from ${H}b.txt: formats missing`,
    ]);
    expect(loader.calls).toBe(1);
  });

  it('is accepted by the options check; anything else that is not a registry is refused', async () => {
    await expect(walk({}, countingLoader())).resolves.toBeDefined();
    await expect(walk({}, {} as unknown as Registry)).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(walk({}, 'formats' as unknown as Registry)).rejects.toBeInstanceOf(InvalidOptionError);
  });
});
