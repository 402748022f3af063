import { startTestServer, type TestServer } from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createWebClient,
  InvalidOptionError,
  pageUrls,
  type SitemapTreeOptions,
  sitemapTreeForHomepage,
  walkPages,
} from '../src/index.js';
import { robots, sitemapIndex, TEXT, urlset, XML } from './tree-helpers.js';

// What a user of fetch, undici, got or crawlee writes first, and what usp answers.

let server: TestServer;
let o: string;
const webClientOptions = { allowPrivateNetworks: true, retries: 1 };

beforeAll(async () => {
  server = await startTestServer();
  o = server.origin;
  server.route('/robots.txt', { headers: TEXT, body: robots([`${o}/index.xml`]) });
  server.route('/index.xml', { headers: XML, body: sitemapIndex([`${o}/a.xml`, `${o}/b.xml`]) });
  server.route('/a.xml', { headers: XML, body: urlset([`${o}/1`, `${o}/2`, `${o}/3`]) });
  // One URL listed twice: the list has it once, where it first came.
  server.route('/b.xml', { headers: XML, body: urlset([`${o}/2`, `${o}/4`]) });
});

afterAll(async () => {
  await server.close();
});

/** The message of the `InvalidOptionError` that `run` rejects or throws with. */
async function optionError(run: () => Promise<unknown> | unknown): Promise<string> {
  try {
    await run();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidOptionError);
    return (err as Error).message;
  }
  throw new Error('no error');
}

describe('network options beside the walk options', () => {
  it('are refused with where they go, before any request', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ timeout: 5000 }, 'webClientOptions.requestTimeoutMs'],
      [{ userAgent: 'bot/1' }, 'webClientOptions.userAgent'],
      [{ retries: 2 }, 'webClientOptions.retries'],
      [{ proxy: 'http://127.0.0.1:3128' }, 'webClientOptions.proxy'],
      [{ insecure: true }, 'webClientOptions.tlsVerify: false'],
      [{ headers: { cookie: 'a=1' } }, 'webClientOptions.headers'],
      [{ requestTimeoutMs: 5000 }, 'webClientOptions.requestTimeoutMs'],
    ];
    const before = server.requests.length;
    for (const [options, where] of cases) {
      const key = Object.keys(options)[0];
      const message = await optionError(() =>
        sitemapTreeForHomepage(`${o}/`, { webClientOptions, ...options } as SitemapTreeOptions),
      );
      expect(message, key).toBe(
        `Option ${key}: unknown option: network options go in webClientOptions (did you mean ${where}?)`,
      );
    }
    // walkPages says so when called, not at the first page.
    const walk = await optionError(() => walkPages(`${o}/`, { timeout: 1 } as SitemapTreeOptions));
    expect(walk).toContain('did you mean webClientOptions.requestTimeoutMs?');
    expect(server.requests.length).toBe(before);
  });

  it("inside webClientOptions, other clients' names point to ours", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ timeout: 5000 }, 'requestTimeoutMs'],
      [{ rejectUnauthorized: false }, 'tlsVerify'],
      [{ insecure: true }, 'tlsVerify: false'],
      [{ ca: '-----BEGIN CERTIFICATE-----' }, 'tlsCa'],
      [{ maxRedirections: 3 }, 'maxRedirects'],
    ];
    for (const [options, ours] of cases) {
      const key = Object.keys(options)[0];
      const message = await optionError(() => createWebClient(options as never));
      expect(message, key).toBe(`Option ${key}: unknown option (did you mean ${ours}?)`);
    }
  });

  it('a typo of a walk option still gets the closest walk option', async () => {
    const message = await optionError(() =>
      sitemapTreeForHomepage(`${o}/`, { webClientOptions, maxPage: 3 } as SitemapTreeOptions),
    );
    expect(message).toContain('did you mean maxPages?');
  });
});

describe('pageUrls', () => {
  it('is every page URL of the site, each once, in walk order', async () => {
    const urls = await pageUrls(`${o}/`, { webClientOptions, useKnownPaths: false });
    expect(urls).toEqual([`${o}/1`, `${o}/2`, `${o}/3`, `${o}/4`]);
  });

  it('takes the walk options: a budget cuts the list', async () => {
    const urls = await pageUrls(`${o}/`, { webClientOptions, useKnownPaths: false, maxPages: 2 });
    expect(urls).toEqual([`${o}/1`, `${o}/2`]);
  });

  it('is empty for a site that cannot be reached', async () => {
    // Port 1 on loopback: connection refused.
    expect(await pageUrls('http://127.0.0.1:1/', { webClientOptions })).toEqual([]);
  });
});
