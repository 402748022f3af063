import { describe, expect, it } from 'vitest';
import { InvalidOptionError, InvalidUrlError } from '../src/contract/errors.js';
import { sitemapToJSON } from '../src/contract/json.js';
import { type ChildRef, newPageDraft, type Page } from '../src/contract/model.js';
import { memoryPageStore } from '../src/contract/page-store.js';
import type { ParsedDocument } from '../src/contract/parsed-document.js';
import { createRegistry } from '../src/contract/registry.js';
import type {
  IndexRobotsTxtSitemap,
  IndexWebsiteSitemap,
  IndexXMLSitemap,
  InvalidSitemap,
  PagesSitemapType,
  Sitemap,
} from '../src/contract/sitemap.js';
import { SitemapDate } from '../src/contract/sitemap-date.js';
import type { Warning } from '../src/contract/warning.js';
import { headerLookup, type WebClient, type WebResponse } from '../src/contract/web-client.js';
import type { ParseDocumentOptions } from '../src/engine/document-options.js';
import { KNOWN_SITEMAP_PATHS, knownPathUrls } from '../src/walk/known-paths.js';
import type { TreeOptions, WalkPagesWithClientOptions } from '../src/walk/options.js';
import type { StoredDocument, WalkedDocument } from '../src/walk/revisit.js';
import type { SkippedSitemap } from '../src/walk/skipped.js';
import {
  sitemapTreeForHomepageWithClient,
  sitemapTreeForUrlWithClient,
  walkPagesWithClient,
  walkSitemapPagesWithClient,
} from '../src/walk/tree.js';
import type { WalkStats } from '../src/walk/walk-stats.js';

// The tree logic is tested here against an in-process client and a tiny stand-in parser, so
// ordering, filters and budgets are checked without formats or sockets. HTTP behaviour is tested
// against real servers in packages/usp/test.

/**
 * Stand-in document format, one item a line:
 *   `index` then `<url> [<lastmod epoch ms>]` lines; `pages` then page URLs; `text` then URLs
 *   (plain text); anything else is unsupported. A body chunk is parsed as it arrives.
 */
async function fakeParse(o: ParseDocumentOptions): Promise<ParsedDocument> {
  const dec = new TextDecoder();
  let kind: string | null = null;
  const children: ChildRef[] = [];
  let truncated = false;
  let bytes = 0;
  let rest = '';
  const pagesType = (): PagesSitemapType => (kind === 'text' ? 'PagesTextSitemap' : 'PagesXMLSitemap');
  const lines = async (text: string) => {
    const batch: Page[] = [];
    for (const line of text.split('\n')) {
      if (line === '') continue;
      if (kind === null) {
        kind = line;
        continue;
      }
      if (kind === 'index') {
        const [url, lm] = line.split(' ');
        children.push({ url, lastModified: lm === undefined ? null : new SitemapDate(Number(lm), 0) });
      } else if (kind === 'pages' || kind === 'text') {
        batch.push(newPageDraft(line));
      }
    }
    if (batch.length > 0) {
      await o.onPages?.(batch, pagesType());
    }
  };
  const body = o.body as AsyncIterable<Uint8Array>;
  try {
    for await (const chunk of body) {
      bytes += chunk.length;
      const text = rest + dec.decode(chunk, { stream: true });
      const cut = text.lastIndexOf('\n');
      rest = text.slice(cut + 1);
      await lines(text.slice(0, cut + 1));
    }
    await lines(rest);
  } catch {
    truncated = true;
  }
  const url = o.url;
  let type: ParsedDocument['type'];
  if (kind === 'index') type = url.endsWith('/robots.txt') ? 'IndexRobotsTxtSitemap' : 'IndexXMLSitemap';
  else if (kind === 'pages' || kind === 'text' || kind === null) {
    if (kind === null) kind = 'text';
    type = pagesType();
  } else type = 'InvalidSitemap';
  return {
    url,
    type,
    children: type === 'InvalidSitemap' ? [] : children,
    warnings: [],
    bytes,
    truncated,
  };
}

interface Route {
  status?: number;
  /** Body as chunks (one per item), or a generator of chunks. */
  body?: string[] | (() => Iterable<string>);
  redirect?: string;
  /** Answer only once this settles. */
  gate?: Promise<void>;
  notModified?: boolean;
}

class FakeClient implements WebClient {
  readonly requests: string[] = [];
  readonly requestOptions: Record<string, unknown>[] = [];
  inFlight = 0;
  maxInFlight = 0;
  chunksServed = 0;
  constructor(readonly routes: Record<string, Route>) {}

  async get(url: string, options: { signal?: AbortSignal } = {}): Promise<WebResponse> {
    this.requests.push(url);
    this.requestOptions.push({ ...options });
    const route = this.routes[url];
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    let ended = false;
    const end = () => {
      if (!ended) this.inFlight--;
      ended = true;
    };
    const signal = options.signal;
    if (route?.gate !== undefined) {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(new DOMException('aborted', 'AbortError'));
        if (signal?.aborted) onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        route.gate!.then(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        });
      }).catch((e) => {
        end();
        throw e;
      });
    }
    if (route === undefined || (route.status ?? 200) >= 400) {
      end();
      const status = route?.status ?? 404;
      return { kind: 'error', url, status, message: `${status} Oops`, code: 'http-status', retryable: false };
    }
    if (route.notModified) {
      end();
      return { kind: 'not-modified', url, headers: headerLookup({}) };
    }
    const finalUrl = route.redirect ?? url;
    const target = route.redirect === undefined ? route : this.routes[route.redirect];
    const chunks = typeof target?.body === 'function' ? target.body() : (target?.body ?? []);
    const enc = new TextEncoder();
    const client = this;
    let cancelled = false;
    async function* body(): AsyncGenerator<Uint8Array> {
      try {
        for (const c of chunks) {
          if (signal?.aborted) throw new DOMException('aborted', 'AbortError');
          if (cancelled) return;
          client.chunksServed++;
          yield enc.encode(c);
        }
      } finally {
        end();
      }
    }
    return {
      kind: 'ok',
      status: 200,
      statusText: 'OK',
      url: finalUrl,
      headers: headerLookup({ 'content-type': 'text/plain' }),
      body: body(),
      cancel: () => {
        cancelled = true;
        end();
      },
    };
  }
}

const H = 'http://example.com/';
const registry = createRegistry([]);

function opts(
  client: WebClient,
  extra: Partial<WalkPagesWithClientOptions> = {},
): WalkPagesWithClientOptions {
  return { webClient: client, registry, parse: fakeParse, ...extra };
}

function shape(s: Sitemap): unknown {
  const json = sitemapToJSON(s);
  const strip = (n: typeof json): unknown => ({
    type: n.type,
    url: n.url,
    ...(n.reason !== undefined ? { reason: n.reason } : {}),
    ...(n.subSitemaps !== undefined ? { sub: n.subSitemaps.map(strip) } : {}),
    ...(n.pages !== undefined ? { pages: n.pages.map((p) => p.url) } : {}),
  });
  return strip(json);
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('discovery', () => {
  it('fetches robots.txt first, then the known paths in their fixed order, skipping robots-found ones', async () => {
    const client = new FakeClient({
      [`${H}robots.txt`]: { body: ['index\n', `${H}sitemap.xml\n`] },
      [`${H}sitemap.xml`]: { body: ['pages\n', `${H}a\n`] },
      [`${H}sitemap_news.xml`]: { body: ['pages\n', `${H}n\n`] },
    });
    const tree = await sitemapTreeForHomepageWithClient(H, opts(client, { concurrency: 1 }));
    expect(client.requests[0]).toBe(`${H}robots.txt`);
    expect(client.requests[1]).toBe(`${H}sitemap.xml`);
    const probed = client.requests.slice(2);
    expect(probed).toEqual(KNOWN_SITEMAP_PATHS.filter((p) => p !== 'sitemap.xml').map((p) => H + p));
    expect(shape(tree)).toEqual({
      type: 'IndexWebsiteSitemap',
      url: H,
      sub: [
        {
          type: 'IndexRobotsTxtSitemap',
          url: `${H}robots.txt`,
          sub: [{ type: 'PagesXMLSitemap', url: `${H}sitemap.xml`, pages: [`${H}a`] }],
        },
        { type: 'PagesXMLSitemap', url: `${H}sitemap_news.xml`, pages: [`${H}n`] },
      ],
    });
  });

  it('drops invalid top-level results and soft 404s (empty or URL-less text at a known path)', async () => {
    const warnings: Warning[] = [];
    const client = new FakeClient({
      [`${H}robots.txt`]: { body: ['<html>oops</html>\n'] },
      [`${H}sitemap.xml`]: { body: [] },
      [`${H}sitemap`]: { body: ['text\n'] },
      [`${H}sitemap_index.xml`]: { body: ['text\n', `${H}real\n`] },
    });
    const tree = await sitemapTreeForHomepageWithClient(
      H,
      opts(client, { onWarning: (w) => warnings.push(w) }),
    );
    expect(shape(tree)).toEqual({
      type: 'IndexWebsiteSitemap',
      url: H,
      sub: [{ type: 'PagesTextSitemap', url: `${H}sitemap_index.xml`, pages: [`${H}real`] }],
    });
    expect(warnings.filter((w) => w.code === 'soft-404').map((w) => w.url)).toEqual([
      `${H}sitemap.xml`,
      `${H}sitemap`,
    ]);
    // 404s of probes are expected: no fetch warning for them.
    expect(warnings.filter((w) => w.code === 'fetch')).toEqual([]);
  });

  it('keeps empty text top-level results with dropSoft404: false (usp)', async () => {
    const client = new FakeClient({ [`${H}sitemap.xml`]: { body: [] } });
    const tree = await sitemapTreeForHomepageWithClient(
      H,
      opts(client, { useRobots: false, dropSoft404: false }),
    );
    expect(tree.subSitemaps.map((s) => s.type)).toEqual(['PagesTextSitemap']);
  });

  it('joins extra known paths with one slash, adds wp-sitemap.xml and sitemap.txt on request', () => {
    const urls = knownPathUrls(H, {
      extraKnownPaths: ['/custom.xml', 'a/b.xml', 'http://other.example/x.xml', 'sitemap.xml'],
      includeWordPressSitemap: true,
      includeSitemapTxt: true,
    });
    expect(urls.slice(14)).toEqual([
      `${H}wp-sitemap.xml`,
      `${H}sitemap.txt`,
      `${H}custom.xml`,
      `${H}a/b.xml`,
      'http://other.example/x.xml',
    ]);
    expect(urls).toHaveLength(19);
  });

  it('probes the given knownPaths instead of the 14, extra paths after them', async () => {
    expect(knownPathUrls(H, { knownPaths: [], extraKnownPaths: [`${H}s.xml`] })).toEqual([`${H}s.xml`]);
    const client = new FakeClient({});
    await sitemapTreeForHomepageWithClient(H, opts(client, { useRobots: false, knownPaths: ['only.xml'] }));
    expect(client.requests).toEqual([`${H}only.xml`]);
    expect(() => walkPagesWithClient(H, opts(client, { knownPaths: 'x' as unknown as string[] }))).toThrow(
      InvalidOptionError,
    );
  });

  it('normalises the homepage with a warning, or keeps its path when asked', async () => {
    const warnings: Warning[] = [];
    const client = new FakeClient({});
    const tree = await sitemapTreeForHomepageWithClient(
      'http://example.com/a/b?q=1',
      opts(client, { useKnownPaths: false, onWarning: (w) => warnings.push(w) }),
    );
    expect(tree.url).toBe(H);
    expect(client.requests).toEqual([`${H}robots.txt`]);
    expect(warnings[0]).toMatchObject({ code: 'homepage' });
    expect(tree.warnings[0].message).toContain('Assuming that the homepage of http://example.com/a/b?q=1 is');

    const raw = new FakeClient({});
    const t2 = await sitemapTreeForHomepageWithClient(
      'http://example.com/foo/bar',
      opts(raw, { normalizeHomepage: false, extraKnownPaths: ['x.xml'] }),
    );
    expect(t2.url).toBe('http://example.com/foo/bar/');

    const quiet: Warning[] = [];
    await sitemapTreeForHomepageWithClient(
      'http://example.com',
      opts(new FakeClient({}), { onWarning: (w) => quiet.push(w) }),
    );
    expect(quiet.filter((w) => w.code === 'homepage')).toEqual([]);
    expect(raw.requests[0]).toBe('http://example.com/foo/bar/robots.txt');
    expect(raw.requests).toContain('http://example.com/foo/bar/x.xml');
  });

  it('walks exactly the sitemaps given: no robots.txt, no known paths, failures kept as nodes', async () => {
    const client = new FakeClient({
      [`${H}robots.txt`]: { body: ['index\n', `${H}from-robots.xml\n`] },
      [`${H}sitemap.xml`]: { body: ['pages\n', `${H}known\n`] },
      [`${H}news/index.xml`]: { body: ['index\n', `${H}news/a.xml\n`] },
      [`${H}news/a.xml`]: { body: ['pages\n', `${H}n1\n`] },
      [`${H}b.xml`]: { body: ['pages\n', `${H}b1\n`] },
    });
    const sitemaps = [`${H}news/index.xml`, `${H}missing.xml`, `${H}b.xml`, `${H}b.xml`];
    const tree = await sitemapTreeForHomepageWithClient(H, opts(client, { sitemaps }));
    expect(shape(tree)).toEqual({
      type: 'IndexWebsiteSitemap',
      url: H,
      sub: [
        {
          type: 'IndexXMLSitemap',
          url: `${H}news/index.xml`,
          sub: [{ type: 'PagesXMLSitemap', url: `${H}news/a.xml`, pages: [`${H}n1`] }],
        },
        { type: 'InvalidSitemap', url: `${H}missing.xml`, reason: expect.stringContaining('404') },
        { type: 'PagesXMLSitemap', url: `${H}b.xml`, pages: [`${H}b1`] },
      ],
    });
    expect([...client.requests].sort()).toEqual(
      [`${H}b.xml`, `${H}missing.xml`, `${H}news/a.xml`, `${H}news/index.xml`].sort(),
    );
    const pages: string[] = [];
    for await (const { page } of walkPagesWithClient(H, opts(client, { sitemaps }))) pages.push(page.url);
    expect(pages.sort()).toEqual([`${H}b1`, `${H}n1`]);
    expect(() => walkPagesWithClient(H, opts(client, { sitemaps: ['/relative.xml'] }))).toThrow(
      'Option sitemaps: "/relative.xml" is not an absolute http(s) URL',
    );
  });

  it('refuses a non-http homepage and bad options before doing anything', async () => {
    const client = new FakeClient({});
    await expect(sitemapTreeForHomepageWithClient('ftp://example.com/', opts(client))).rejects.toBeInstanceOf(
      InvalidUrlError,
    );
    await expect(
      sitemapTreeForHomepageWithClient(H, opts(client, { concurrency: 0 })),
    ).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(
      sitemapTreeForHomepageWithClient(H, { registry } as unknown as TreeOptions),
    ).rejects.toBeInstanceOf(InvalidOptionError);
    expect(() => walkPagesWithClient(H, opts(client, { maxDepth: -1 }))).toThrow(InvalidOptionError);
    // A misspelt option is refused, naming the one it was probably meant to be; bufferPages is
    // a walk's option, not a tree's.
    expect(() => walkPagesWithClient(H, opts(client, { maxPage: 10 } as never))).toThrow(
      'Option maxPage: unknown option (did you mean maxPages?)',
    );
    expect(() => walkPagesWithClient(H, opts(client, { bufferPages: 5 }))).not.toThrow();
    await expect(
      sitemapTreeForHomepageWithClient(H, opts(client, { bufferPages: 5 } as never)),
    ).rejects.toThrow('Option bufferPages: unknown option');
    expect(client.requests).toEqual([]);
  });
});

describe('recursion', () => {
  it('stops below level 11 with usp reason, robots.txt being level 0', async () => {
    const routes: Record<string, Route> = { [`${H}robots.txt`]: { body: ['index\n', `${H}s1.xml\n`] } };
    for (let i = 1; i <= 12; i++) routes[`${H}s${i}.xml`] = { body: ['index\n', `${H}s${i + 1}.xml\n`] };
    const client = new FakeClient(routes);
    const tree = await sitemapTreeForHomepageWithClient(H, opts(client, { useKnownPaths: false }));
    let node: Sitemap = tree.subSitemaps[0];
    for (let i = 1; i <= 11; i++) {
      node = (node as IndexXMLSitemap).subSitemaps[0];
      expect(node).toMatchObject({ type: 'IndexXMLSitemap', url: `${H}s${i}.xml` });
    }
    const deepest = (node as IndexXMLSitemap).subSitemaps[0] as InvalidSitemap;
    expect(deepest.type).toBe('InvalidSitemap');
    expect(deepest.reason).toBe(
      `Unable to add sub-sitemap from URL ${H}s12.xml: Recursion level exceeded 11 for URL ${H}s12.xml.`,
    );
    expect(client.requests).not.toContain(`${H}s12.xml`);
  });

  it('catches a child equal to an ancestor by normalised URL, and a redirect into an ancestor', async () => {
    const client = new FakeClient({
      [`${H}robots.txt`]: { body: ['index\n', `${H}a.xml\n`] },
      [`${H}a.xml`]: { body: ['index\n', 'HTTP://EXAMPLE.COM:80/a.xml#x\n', `${H}b.xml\n`] },
      [`${H}b.xml`]: { redirect: `${H}a.xml` },
    });
    const tree = await sitemapTreeForHomepageWithClient(H, opts(client, { useKnownPaths: false }));
    const a = (tree.subSitemaps[0] as IndexRobotsTxtSitemap).subSitemaps[0] as IndexXMLSitemap;
    const [self, redirected] = a.subSitemaps as InvalidSitemap[];
    expect(self.reason).toMatch(
      /^Unable to add sub-sitemap from URL HTTP:\/\/EXAMPLE.COM:80\/a.xml#x: Recursion detected in URL/,
    );
    expect(self.reason).toContain(`'${H}a.xml'`);
    expect(redirected.url).toBe(`${H}b.xml`);
    expect(redirected.reason).toBe(
      `Recursion detected when ${H}b.xml redirected to ${H}a.xml with parent URLs {'${H}a.xml', '${H}robots.txt'}.`,
    );
    expect(client.requests.filter((u) => u === `${H}a.xml`)).toHaveLength(1);
  });

  it('counts a sitemap that redirected onto one the walk has once in its progress', async () => {
    const client = new FakeClient({
      [`${H}robots.txt`]: { body: ['index\n', `${H}a.xml\n`, `${H}b.xml\n`] },
      [`${H}a.xml`]: { body: ['pages\n', `${H}p\n`] },
      [`${H}b.xml`]: { redirect: `${H}a.xml` },
    });
    let last: WalkStats | null = null;
    const tree = await sitemapTreeForHomepageWithClient(
      H,
      opts(client, {
        useKnownPaths: false,
        concurrency: 1,
        onProgress: (s) => {
          last = s;
        },
      }),
    );
    const [a, b] = (tree.subSitemaps[0] as IndexRobotsTxtSitemap).subSitemaps;
    expect(a.type).toBe('PagesXMLSitemap');
    expect((b as InvalidSitemap).reason).toMatch(
      /^Sitemap .*b\.xml was fetched already in this walk \(as .*a\.xml\)/,
    );
    // robots.txt, a.xml and b.xml: three documents done, each once.
    expect(last).toMatchObject({ sitemapsFetched: 3, sitemapsDone: 3 });
  });

  it('reports fetch failures with usp reason and keeps the index entry lastmod on the child node', async () => {
    const lm = Date.UTC(2024, 0, 2);
    const client = new FakeClient({
      [`${H}robots.txt`]: { body: ['index\n', `${H}idx.xml\n`] },
      [`${H}idx.xml`]: { body: ['index\n', `${H}ok.xml ${lm}\n`, `${H}gone.xml\n`] },
      [`${H}ok.xml`]: { body: ['pages\n', `${H}p\n`] },
      [`${H}gone.xml`]: { status: 404 },
    });
    const tree = await sitemapTreeForHomepageWithClient(H, opts(client, { useKnownPaths: false }));
    const idx = (tree.subSitemaps[0] as IndexRobotsTxtSitemap).subSitemaps[0] as IndexXMLSitemap;
    expect(idx.subSitemaps[0].lastModified?.epochMs).toBe(lm);
    expect(idx.subSitemaps[1]).toMatchObject({
      type: 'InvalidSitemap',
      reason: `Unable to fetch sitemap from ${H}gone.xml: 404 Oops`,
    });
  });

  it('applies the list callback then the per-URL callback with usp levels and parents', async () => {
    const calls: unknown[] = [];
    const lm = Date.UTC(2020, 5, 1);
    const client = new FakeClient({
      [`${H}robots.txt`]: { body: ['index\n', `${H}i1.xml\n`, `${H}skip-me.xml\n`] },
      [`${H}i1.xml`]: { body: ['index\n', `${H}p1.xml ${lm}\n`, `${H}p2.xml\n`, `${H}boom.xml\n`] },
      [`${H}p1.xml`]: { body: ['pages\n', `${H}x\n`] },
    });
    const tree = await sitemapTreeForHomepageWithClient(
      H,
      opts(client, {
        useKnownPaths: false,
        recurseListCallback: (urls, level, parents, lastMods) => {
          calls.push(['list', urls, level, [...parents].sort(), lastMods.map((d) => d?.epochMs ?? null)]);
          return urls.filter((u) => !u.includes('skip-me'));
        },
        recurseCallback: (url, level, parents, lastMod) => {
          calls.push(['one', url, level, [...parents].sort(), lastMod?.epochMs ?? null]);
          if (url.includes('boom')) throw new Error('callback failed');
          return !url.endsWith('p2.xml');
        },
      }),
    );
    expect(calls).toEqual([
      ['list', [`${H}i1.xml`, `${H}skip-me.xml`], 0, [`${H}robots.txt`], [null, null]],
      ['one', `${H}i1.xml`, 0, [`${H}robots.txt`], null],
      [
        'list',
        [`${H}p1.xml`, `${H}p2.xml`, `${H}boom.xml`],
        1,
        [`${H}i1.xml`, `${H}robots.txt`],
        [lm, null, null],
      ],
      ['one', `${H}p1.xml`, 1, [`${H}i1.xml`, `${H}robots.txt`], lm],
      ['one', `${H}p2.xml`, 1, [`${H}i1.xml`, `${H}robots.txt`], null],
      ['one', `${H}boom.xml`, 1, [`${H}i1.xml`, `${H}robots.txt`], null],
    ]);
    const i1 = (tree.subSitemaps[0] as IndexRobotsTxtSitemap).subSitemaps[0] as IndexXMLSitemap;
    expect(i1.subSitemaps.map((s) => [s.type, s.url])).toEqual([
      ['PagesXMLSitemap', `${H}p1.xml`],
      ['InvalidSitemap', `${H}boom.xml`],
    ]);
    expect((i1.subSitemaps[1] as InvalidSitemap).reason).toBe(
      `Unable to add sub-sitemap from URL ${H}boom.xml: callback failed`,
    );
    expect(client.requests).not.toContain(`${H}skip-me.xml`);
  });

  it('lets an exception from the list callback escape, as usp does', async () => {
    const client = new FakeClient({ [`${H}robots.txt`]: { body: ['index\n', `${H}a.xml\n`] } });
    const error = new Error('list callback failed');
    await expect(
      sitemapTreeForHomepageWithClient(
        H,
        opts(client, {
          recurseListCallback: () => {
            throw error;
          },
        }),
      ),
    ).rejects.toBe(error);
  });

  it('gives known paths the robots.txt sitemaps as parents (usp)', async () => {
    const client = new FakeClient({
      [`${H}robots.txt`]: { body: ['index\n', `${H}listed.xml\n`] },
      [`${H}listed.xml`]: { body: ['pages\n', `${H}p\n`] },
      [`${H}sitemap_index.xml`]: { body: ['index\n', `${H}listed.xml\n`] },
      [`${H}sitemap-index.xml`]: { redirect: `${H}listed.xml` },
    });
    const tree = await sitemapTreeForHomepageWithClient(H, opts(client));
    expect(tree.subSitemaps.map((s) => s.url)).toEqual([`${H}robots.txt`, `${H}sitemap_index.xml`]);
    const idx = tree.subSitemaps[1] as IndexXMLSitemap;
    expect((idx.subSitemaps[0] as InvalidSitemap).reason).toContain('Recursion detected in URL');
  });

  it("refuses children and redirects off the homepage's site with hostPolicy 'same-site'", async () => {
    const client = new FakeClient({
      [`${H}robots.txt`]: {
        body: ['index\n', 'http://cdn.example.com/s.xml\n', 'http://evil.test/s.xml\n', `${H}r.xml\n`],
      },
      'http://cdn.example.com/s.xml': { body: ['pages\n', `${H}p\n`] },
      [`${H}r.xml`]: { redirect: 'http://evil.test/s.xml' },
      'http://evil.test/s.xml': { body: ['pages\n', 'http://evil.test/p\n'] },
    });
    const tree = await sitemapTreeForHomepageWithClient(
      H,
      opts(client, { useKnownPaths: false, hostPolicy: 'same-site' }),
    );
    const robots = tree.subSitemaps[0] as IndexRobotsTxtSitemap;
    expect(robots.subSitemaps.map((s) => s.type)).toEqual([
      'PagesXMLSitemap',
      'InvalidSitemap',
      'InvalidSitemap',
    ]);
    expect((robots.subSitemaps[1] as InvalidSitemap).reason).toContain(
      'outside the site of http://example.com/',
    );
    expect((robots.subSitemaps[2] as InvalidSitemap).reason).toContain(
      'redirected to http://evil.test/s.xml',
    );
    expect(client.requests).not.toContain('http://evil.test/s.xml');
  });
});

describe('concurrency', () => {
  it('keeps document order when children answer in reverse order, within the concurrency limit', async () => {
    const n = 6;
    const gates = Array.from({ length: n }, () => deferred());
    const routes: Record<string, Route> = {
      [`${H}idx.xml`]: { body: ['index\n', ...Array.from({ length: n }, (_, i) => `${H}c${i}.xml\n`)] },
    };
    for (let i = 0; i < n; i++)
      routes[`${H}c${i}.xml`] = { gate: gates[i].promise, body: ['pages\n', `${H}p${i}\n`] };
    const client = new FakeClient(routes);
    const done = sitemapTreeForUrlWithClient(`${H}idx.xml`, opts(client, { concurrency: n }));
    // Let every child request start, then answer them last to first.
    while (client.requests.length < n + 1) await new Promise((r) => setTimeout(r, 1));
    for (let i = n - 1; i >= 0; i--) gates[i].resolve();
    const tree = (await done) as IndexXMLSitemap;
    expect(tree.subSitemaps.map((s) => s.url)).toEqual(Array.from({ length: n }, (_, i) => `${H}c${i}.xml`));
    expect([...tree.allPages()].map((p) => p.url)).toEqual(Array.from({ length: n }, (_, i) => `${H}p${i}`));
  });

  it('never has more documents in flight than the concurrency option', async () => {
    const routes: Record<string, Route> = {
      [`${H}idx.xml`]: { body: ['index\n', ...Array.from({ length: 20 }, (_, i) => `${H}c${i}.xml\n`)] },
    };
    for (let i = 0; i < 20; i++)
      routes[`${H}c${i}.xml`] = { body: ['pages\n', `${H}p${i}a\n`, `${H}p${i}b\n`] };
    const client = new FakeClient(routes);
    const tree = await sitemapTreeForUrlWithClient(`${H}idx.xml`, opts(client, { concurrency: 3 }));
    expect(client.maxInFlight).toBeLessThanOrEqual(3);
    expect([...tree.allPages()]).toHaveLength(40);
  });
});

describe('budgets and cancellation', () => {
  function bigIndex(n: number): Record<string, Route> {
    const routes: Record<string, Route> = {
      [`${H}idx.xml`]: { body: ['index\n', ...Array.from({ length: n }, (_, i) => `${H}c${i}.xml\n`)] },
    };
    for (let i = 0; i < n; i++) {
      routes[`${H}c${i}.xml`] = {
        body: ['pages\n', ...Array.from({ length: 10 }, (_, k) => `${H}p${i}-${k}\n`)],
      };
    }
    return routes;
  }

  it('maxSitemaps: stops requesting, marks unfetched children and says why', async () => {
    const client = new FakeClient(bigIndex(10));
    const warnings: Warning[] = [];
    let last: WalkStats | null = null;
    const tree = (await sitemapTreeForUrlWithClient(
      `${H}idx.xml`,
      opts(client, {
        maxSitemaps: 4,
        concurrency: 1,
        onWarning: (w) => warnings.push(w),
        onProgress: (s) => {
          last = s;
        },
      }),
    )) as IndexXMLSitemap;
    expect(client.requests).toHaveLength(4);
    expect(tree.subSitemaps).toHaveLength(10);
    expect(tree.subSitemaps.slice(0, 3).map((s) => s.type)).toEqual(Array(3).fill('PagesXMLSitemap'));
    for (const s of tree.subSitemaps.slice(3)) {
      expect(s).toMatchObject({ type: 'InvalidSitemap' });
      expect((s as InvalidSitemap).reason).toBe(
        "Un-fetched child sitemap: the walk's limit of 4 sitemaps was reached",
      );
    }
    expect(warnings.filter((w) => w.code === 'limit')).toHaveLength(1);
    expect(tree.warnings.some((w) => w.code === 'limit')).toBe(true);
    expect(last).toMatchObject({ stoppedBy: 'maxSitemaps', sitemapsFetched: 4 });
  });

  it('maxSitemaps: requests already made (within the budget) still finish', async () => {
    const gate = deferred();
    const client = new FakeClient({
      [`${H}idx.xml`]: { body: ['index\n', `${H}c0.xml\n`, `${H}c1.xml\n`, `${H}c2.xml\n`] },
      [`${H}c0.xml`]: { gate: gate.promise, body: ['pages\n', `${H}a\n`, `${H}b\n`] },
      [`${H}c1.xml`]: { body: ['pages\n', `${H}c\n`] },
    });
    const done = sitemapTreeForUrlWithClient(`${H}idx.xml`, opts(client, { maxSitemaps: 2, concurrency: 2 }));
    while (client.requests.length < 2) await new Promise((r) => setTimeout(r, 1));
    // Let the walk reach c1 (over budget) before c0 answers.
    for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 0));
    gate.resolve();
    const node = (await done) as IndexXMLSitemap;
    expect(node.subSitemaps.map((s) => s.type)).toEqual([
      'PagesXMLSitemap',
      'InvalidSitemap',
      'InvalidSitemap',
    ]);
    expect([...node.allPages()].map((p) => p.url)).toEqual([`${H}a`, `${H}b`]);
    expect(client.requests).toEqual([`${H}idx.xml`, `${H}c0.xml`]);
  });

  it('maxPages: keeps exactly that many pages and stops the walk', async () => {
    const client = new FakeClient(bigIndex(10));
    const tree = (await sitemapTreeForUrlWithClient(
      `${H}idx.xml`,
      opts(client, { maxPages: 25, concurrency: 2 }),
    )) as IndexXMLSitemap;
    expect([...tree.allPages()]).toHaveLength(25);
    expect(client.requests.length).toBeLessThan(11);
    expect(tree.warnings.map((w) => w.code)).toContain('limit');
  });

  it('deadline: a server that never answers ends the walk with what it has', async () => {
    const never = new Promise<void>(() => {});
    const client = new FakeClient({
      [`${H}robots.txt`]: { body: ['index\n', `${H}ok.xml\n`, `${H}hang.xml\n`, `${H}later.xml\n`] },
      [`${H}ok.xml`]: { body: ['pages\n', `${H}p\n`] },
      [`${H}hang.xml`]: { gate: never },
      [`${H}later.xml`]: { gate: never },
    });
    const tree = await sitemapTreeForHomepageWithClient(H, opts(client, { deadlineMs: 30, concurrency: 2 }));
    const robots = tree.subSitemaps[0] as IndexRobotsTxtSitemap;
    expect(robots.subSitemaps.map((s) => s.type)).toEqual([
      'PagesXMLSitemap',
      'InvalidSitemap',
      'InvalidSitemap',
    ]);
    expect((robots.subSitemaps[1] as InvalidSitemap).reason).toContain('deadline of 30 ms');
    expect(tree.warnings.map((w) => w.code)).toContain('limit');
    // Known paths were never probed once the deadline had passed.
    expect(client.requests).not.toContain(`${H}sitemap.xml`);
  });

  it('abort: stops in-flight requests, returns the tree and leaves no listener on the signal', async () => {
    const controller = new AbortController();
    let listeners = 0;
    const signal = controller.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((...a: Parameters<typeof add>) => {
      listeners++;
      add(...a);
    }) as typeof add;
    signal.removeEventListener = ((...a: Parameters<typeof remove>) => {
      listeners--;
      remove(...a);
    }) as typeof remove;
    const gate = deferred();
    const client = new FakeClient({
      [`${H}robots.txt`]: { body: ['index\n', `${H}hang.xml\n`] },
      [`${H}hang.xml`]: { gate: gate.promise },
    });
    const done = sitemapTreeForHomepageWithClient(H, opts(client, { signal }));
    while (!client.requests.includes(`${H}hang.xml`)) await new Promise((r) => setTimeout(r, 1));
    controller.abort();
    const tree = await done;
    const robots = tree.subSitemaps[0] as IndexRobotsTxtSitemap;
    expect((robots.subSitemaps[0] as InvalidSitemap).reason).toContain('aborted');
    expect(tree.warnings.map((w) => w.code)).toContain('aborted');
    expect(client.inFlight).toBe(0);
    expect(listeners).toBe(0);
  });

  it('an already aborted signal fetches nothing', async () => {
    const client = new FakeClient({});
    const tree = await sitemapTreeForHomepageWithClient(H, opts(client, { signal: AbortSignal.abort() }));
    expect(tree.subSitemaps).toEqual([]);
    expect(client.requests).toEqual([]);
    // The caller stopped it before it began: partial, never unreachable.
    expect(tree.summary).toMatchObject({ outcome: 'partial', stoppedBy: 'aborted' });
  });
});

describe('misbehaving hooks', () => {
  it('a listener or hook that throws does not break the walk', async () => {
    const client = new FakeClient({
      [`${H}robots.txt`]: { body: ['index\n', `${H}a.xml\n`, `${H}missing.xml\n`] },
      [`${H}a.xml`]: { body: ['pages\n', `${H}p\n`] },
    });
    const boom = () => {
      throw new Error('hook failed');
    };
    const tree = await sitemapTreeForHomepageWithClient(
      'http://example.com/x',
      opts(client, { onWarning: boom, onProgress: boom, onResponse: boom, conditionalRequest: boom }),
    );
    const robots = tree.subSitemaps[0] as IndexRobotsTxtSitemap;
    expect(robots.subSitemaps.map((s) => s.type)).toEqual(['PagesXMLSitemap', 'InvalidSitemap']);
  });

  it('a custom client that throws instead of answering an error loses only that sitemap', async () => {
    const inner = new FakeClient({
      [`${H}idx.xml`]: { body: ['index\n', `${H}bad.xml\n`, `${H}ok.xml\n`] },
      [`${H}ok.xml`]: { body: ['pages\n', `${H}p\n`] },
    });
    const client: WebClient = {
      get: (url, o) =>
        url.endsWith('bad.xml') ? Promise.reject(new TypeError('socket hang up')) : inner.get(url, o),
    };
    const node = (await sitemapTreeForUrlWithClient(`${H}idx.xml`, opts(client))) as IndexXMLSitemap;
    expect(node.subSitemaps.map((s) => s.type)).toEqual(['InvalidSitemap', 'PagesXMLSitemap']);
    expect((node.subSitemaps[0] as InvalidSitemap).reason).toBe(
      `Unable to fetch sitemap from ${H}bad.xml: socket hang up`,
    );
  });

  it('checks document limits before starting', () => {
    const client = new FakeClient({});
    expect(() =>
      walkPagesWithClient(H, opts(client, { documentLimits: { maxPagesPerDocument: 0 } })),
    ).toThrow(InvalidOptionError);
    expect(() =>
      walkPagesWithClient(
        H,
        opts(client, { documentLimits: { nope: 1 } as unknown as TreeOptions['documentLimits'] }),
      ),
    ).toThrow(InvalidOptionError);
  });
});

describe('conditional requests and page stores', () => {
  it('passes validators and turns a 304 into a "Not modified" node', async () => {
    const client = new FakeClient({
      [`${H}robots.txt`]: { body: ['index\n', `${H}same.xml\n`] },
      [`${H}same.xml`]: { notModified: true },
    });
    const seen: string[] = [];
    const tree = await sitemapTreeForHomepageWithClient(
      H,
      opts(client, {
        useKnownPaths: false,
        conditionalRequest: (url) => (url.endsWith('same.xml') ? { ifNoneMatch: '"v1"' } : undefined),
        onResponse: (r) => seen.push(r.finalUrl),
      }),
    );
    expect(client.requestOptions[1]).toMatchObject({ ifNoneMatch: '"v1"' });
    const robots = tree.subSitemaps[0] as IndexRobotsTxtSitemap;
    expect((robots.subSitemaps[0] as InvalidSitemap).reason).toContain('Not modified');
    expect(seen).toEqual([`${H}robots.txt`]);
  });

  it('replays the stored children of robots.txt and an index on a 304 and walks on below them', async () => {
    // Old main turned each 304 into an InvalidSitemap "Not modified" and lost the subtree.
    const client = new FakeClient({
      [`${H}robots.txt`]: { notModified: true },
      [`${H}idx.xml`]: { notModified: true },
      [`${H}a.xml`]: { body: ['pages\n', `${H}p1\n`] },
      [`${H}b.xml`]: { notModified: true },
    });
    const stored: Record<string, StoredDocument> = {
      [`${H}robots.txt`]: {
        type: 'IndexRobotsTxtSitemap',
        children: [{ url: `${H}idx.xml`, lastModified: null }],
      },
      [`${H}idx.xml`]: {
        type: 'IndexXMLSitemap',
        children: [
          { url: `${H}a.xml`, lastModified: null },
          { url: `${H}b.xml`, lastModified: null },
        ],
      },
      [`${H}b.xml`]: { type: 'PagesXMLSitemap', children: [] },
    };
    const docs: WalkedDocument[] = [];
    const tree = await sitemapTreeForHomepageWithClient(
      H,
      opts(client, {
        useKnownPaths: false,
        revisit: { plan: () => ({ ifNoneMatch: '"v1"' }), notModified: (url) => stored[url] },
        onDocument: (d) => docs.push(d),
      }),
    );
    expect(client.requests).toEqual([`${H}robots.txt`, `${H}idx.xml`, `${H}a.xml`, `${H}b.xml`]);
    expect(client.requestOptions.every((o) => o.ifNoneMatch === '"v1"')).toBe(true);
    expect([...tree.allSitemaps()].filter((s) => s.type === 'InvalidSitemap')).toEqual([]);
    expect([...tree.allPages()].map((p) => p.url)).toEqual([`${H}p1`]);
    // Siblings finish in network order.
    const byUrl = (a: WalkedDocument, b: WalkedDocument) => a.requestedUrl.localeCompare(b.requestedUrl);
    expect(docs.sort(byUrl).map((d) => [d.requestedUrl, d.reused, d.parentUrl, d.children.length])).toEqual([
      [`${H}a.xml`, null, `${H}idx.xml`, 0],
      [`${H}b.xml`, 'not-modified', `${H}idx.xml`, 0],
      [`${H}idx.xml`, 'not-modified', `${H}robots.txt`, 2],
      [`${H}robots.txt`, 'not-modified', null, 1],
    ]);
  });

  it('does not request a document the plan reuses, and walks its stored children', async () => {
    const client = new FakeClient({
      [`${H}robots.txt`]: { body: ['index\n', `${H}idx.xml 1000\n`] },
      [`${H}a.xml`]: { body: ['pages\n', `${H}p1\n`] },
    });
    const seen: (number | null)[] = [];
    const tree = await sitemapTreeForHomepageWithClient(
      H,
      opts(client, {
        useKnownPaths: false,
        revisit: {
          plan: (url, lastModified) => {
            if (!url.endsWith('idx.xml')) return undefined;
            seen.push(lastModified?.epochMs ?? null);
            return {
              reuse: { type: 'IndexXMLSitemap', children: [{ url: `${H}a.xml`, lastModified: null }] },
            };
          },
          notModified: () => undefined,
        },
      }),
    );
    expect(client.requests).toEqual([`${H}robots.txt`, `${H}a.xml`]);
    expect(seen).toEqual([1000]);
    expect([...tree.allPages()].map((p) => p.url)).toEqual([`${H}p1`]);
  });

  it('rejects a revisit option without its two hooks', () => {
    const client = new FakeClient({});
    expect(() =>
      walkPagesWithClient(
        H,
        opts(client, { revisit: { plan: () => undefined } as unknown as TreeOptions['revisit'] }),
      ),
    ).toThrow(InvalidOptionError);
  });

  it('stores pages in the given store and reads them back on access', async () => {
    const appended: string[] = [];
    const inner = memoryPageStore();
    const client = new FakeClient({ [`${H}s.xml`]: { body: ['pages\n', `${H}a\n`, `${H}b\n`] } });
    const node = await sitemapTreeForUrlWithClient(`${H}s.xml`, {
      ...opts(client),
      pageStore: {
        open(url) {
          const w = inner.open(url);
          return {
            append: (p) => {
              appended.push(p.url);
              w.append(p);
            },
            close: () => w.close(),
          };
        },
      },
    });
    expect(appended).toEqual([`${H}a`, `${H}b`]);
    expect(node.type).toBe('PagesXMLSitemap');
    expect([...node.allPages()].map((p) => p.url)).toEqual(appended);
  });

  it('hands a writer that takes whole batches each batch, and never a page twice', async () => {
    const batches: string[][] = [];
    const inner = memoryPageStore();
    const client = new FakeClient({ [`${H}s.xml`]: { body: ['pages\n', `${H}a\n`, `${H}b\n`] } });
    const node = await sitemapTreeForUrlWithClient(`${H}s.xml`, {
      ...opts(client),
      pageStore: {
        open(url) {
          const w = inner.open(url);
          return {
            append: () => {
              throw new Error('append called though appendPages exists');
            },
            appendPages: (pages) => {
              batches.push(pages.map((p) => p.url));
              for (const p of pages) w.append(p);
            },
            close: () => w.close(),
          };
        },
      },
    });
    expect(batches.flat()).toEqual([`${H}a`, `${H}b`]);
    expect([...node.allPages()].map((p) => p.url)).toEqual([`${H}a`, `${H}b`]);
  });

  it("hands the parser's encoded batch to appendPages with its pages, and none with a batch cut short", async () => {
    const got: [string[], string | undefined][] = [];
    const inner = memoryPageStore();
    const client = new FakeClient({
      [`${H}s.xml`]: { body: ['pages\n', `${H}a\n${H}b\n`, `${H}c\n${H}d\n`] },
    });
    await sitemapTreeForUrlWithClient(`${H}s.xml`, {
      ...opts(client),
      maxPages: 3,
      // A parser that encodes each batch as a store would (usp's parse workers do).
      parse: (o) =>
        fakeParse({
          ...o,
          onPages: (pages, type) =>
            o.onPages?.(pages, type, {
              format: 'urls',
              bytes: new TextEncoder().encode(pages.map((p) => p.url).join()),
            }),
        }),
      pageStore: {
        open(url) {
          const w = inner.open(url);
          return {
            append: (p) => w.append(p),
            appendPages: (pages, encoded) => {
              got.push([pages.map((p) => p.url), encoded && new TextDecoder().decode(encoded.bytes)]);
              for (const p of pages) w.append(p);
            },
            close: () => w.close(),
          };
        },
      },
    });
    expect(got).toEqual([
      [[`${H}a`, `${H}b`], `${H}a,${H}b`],
      [[`${H}c`], undefined],
    ]);
  });
});

describe('walkPagesWithClient', () => {
  it('streams every page with the sitemap it came from, and exposes the tree shape at the end', async () => {
    const client = new FakeClient({
      [`${H}robots.txt`]: { body: ['index\n', `${H}a.xml\n`, `${H}b.xml\n`] },
      [`${H}a.xml`]: { body: ['pages\n', `${H}a1\n`, `${H}a2\n`] },
      [`${H}b.xml`]: { body: ['text\n', `${H}b1\n`] },
    });
    const walk = walkPagesWithClient(H, opts(client, { useKnownPaths: false }));
    const got: string[] = [];
    for await (const { page, sitemap } of walk) got.push(`${sitemap.type} ${sitemap.url} ${page.url}`);
    expect(got.sort()).toEqual([
      `PagesTextSitemap ${H}b.xml ${H}b1`,
      `PagesXMLSitemap ${H}a.xml ${H}a1`,
      `PagesXMLSitemap ${H}a.xml ${H}a2`,
    ]);
    const tree = walk.tree as IndexWebsiteSitemap;
    const robots = tree.subSitemaps[0] as IndexRobotsTxtSitemap;
    // Counted, not kept (the default store of a streaming walk).
    expect(robots.subSitemaps.map((s) => (s as { pageCount: number }).pageCount)).toEqual([2, 1]);
    expect([...tree.allPages()]).toEqual([]);
  });

  it('a consumer that does not pull pauses the parsers and the downloads', async () => {
    const chunks = 1000;
    const client = new FakeClient({
      [`${H}big.xml`]: {
        body: function* () {
          yield 'pages\n';
          for (let i = 0; i < chunks; i++) yield `${H}p${i}\n`;
        },
      },
    });
    const stream = walkSitemapPagesWithClient(`${H}big.xml`, opts(client, { bufferPages: 10 }));
    const first = await stream.next();
    expect(first.value?.page.url).toBe(`${H}p0`);
    // Give a non-pausing implementation every chance to run ahead.
    for (let i = 0; i < 50; i++) await new Promise((r) => setTimeout(r, 0));
    expect(client.chunksServed).toBeLessThan(30);
    let n = 1;
    for await (const _ of stream) n++;
    expect(n).toBe(chunks);
    expect(client.chunksServed).toBe(chunks + 1);
  });

  it('breaking out of the loop stops the walk and its requests', async () => {
    const routes: Record<string, Route> = {
      [`${H}idx.xml`]: { body: ['index\n', ...Array.from({ length: 50 }, (_, i) => `${H}c${i}.xml\n`)] },
    };
    for (let i = 0; i < 50; i++) routes[`${H}c${i}.xml`] = { body: ['pages\n', `${H}p${i}\n`] };
    const client = new FakeClient(routes);
    const stream = walkSitemapPagesWithClient(
      `${H}idx.xml`,
      opts(client, { concurrency: 2, bufferPages: 1 }),
    );
    for await (const _ of stream) break;
    expect(client.requests.length).toBeLessThan(10);
    expect(client.inFlight).toBe(0);
    expect(stream.stats.sitemapsInFlight).toBe(0);
  });

  it('an exception from the list callback surfaces from the iterator', async () => {
    const client = new FakeClient({ [`${H}idx.xml`]: { body: ['index\n', `${H}a.xml\n`] } });
    const stream = walkSitemapPagesWithClient(
      `${H}idx.xml`,
      opts(client, {
        recurseListCallback: () => {
          throw new Error('nope');
        },
      }),
    );
    await expect(stream.next()).rejects.toThrow('nope');
  });
});

describe('onTreeNode', () => {
  /** Every node of `root` but the root itself, depth first, with its depth: what a tree printer walks. */
  function inTreeOrder(root: Sitemap): [string, string, number][] {
    const out: [string, string, number][] = [];
    const visit = (node: Sitemap, depth: number) => {
      if (depth > 0) out.push([node.type, node.url, depth]);
      if ('subSitemaps' in node) for (const child of node.subSitemaps) visit(child, depth + 1);
    };
    visit(root, 0);
    return out;
  }

  it("reports the returned tree's nodes in its order, each once everything before it is built", async () => {
    const slow = deferred();
    const client = new FakeClient({
      [`${H}robots.txt`]: { body: ['index\n', `${H}idx.xml\n`] },
      [`${H}idx.xml`]: {
        body: [
          'index\n',
          `${H}slow.xml\n`,
          `${H}fast.xml\n`,
          `${H}gone.xml\n`,
          `${H}fast.xml\n`,
          `${H}idx2.xml\n`,
          `${H}idx.xml\n`,
        ],
      },
      [`${H}slow.xml`]: { gate: slow.promise, body: ['pages\n', `${H}s1\n`, `${H}s2\n`] },
      [`${H}fast.xml`]: { body: ['pages\n', `${H}f1\n`] },
      [`${H}idx2.xml`]: { body: ['index\n', `${H}deep.xml\n`] },
      [`${H}deep.xml`]: { body: ['pages\n', `${H}d1\n`] },
      // A known path kept, one dropped as a soft 404 (URL-less text), the rest 404.
      [`${H}sitemap.xml`]: { body: ['pages\n', `${H}k1\n`] },
      [`${H}sitemap_index.xml`]: { body: ['text\n'] },
    });
    const seen: [string, string, number][] = [];
    const pagesWhenSeen: string[][] = [];
    const fastDone = deferred();
    const walking = sitemapTreeForHomepageWithClient(
      H,
      opts(client, {
        onTreeNode: async ({ node, depth }) => {
          seen.push([node.type, node.url, depth]);
          if (node.type !== 'InvalidSitemap' && 'pageCount' in node) {
            pagesWhenSeen.push([...node.iteratePages()].map((p) => p.url));
          }
        },
        onDocument: (d) => {
          if (d.requestedUrl === `${H}deep.xml`) fastDone.resolve();
        },
      }),
    );
    // Everything after slow.xml is read, but nothing after it is reported until it is.
    await fastDone.promise;
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual([
      ['IndexRobotsTxtSitemap', `${H}robots.txt`, 1],
      ['IndexXMLSitemap', `${H}idx.xml`, 2],
    ]);
    slow.resolve();
    const tree = await walking;
    expect(seen).toEqual(inTreeOrder(tree));
    expect(seen.map(([, url]) => url)).toEqual([
      `${H}robots.txt`,
      `${H}idx.xml`,
      `${H}slow.xml`,
      `${H}fast.xml`,
      `${H}gone.xml`,
      `${H}fast.xml`,
      `${H}idx2.xml`,
      `${H}deep.xml`,
      `${H}idx.xml`,
      `${H}sitemap.xml`,
    ]);
    // A pages sitemap is reported with its pages stored.
    expect(pagesWhenSeen).toEqual([[`${H}s1`, `${H}s2`], [`${H}f1`], [`${H}d1`], [`${H}k1`]]);
  });

  it('reports the sitemaps given, and the one sitemap of a sitemap walk at depth 0', async () => {
    const client = new FakeClient({
      [`${H}a.xml`]: { body: ['index\n', `${H}b.xml\n`] },
      [`${H}b.xml`]: { body: ['pages\n', `${H}p\n`] },
    });
    const seen: [string, string, number][] = [];
    const onTreeNode = ({ node, depth }: { node: Sitemap; depth: number }) => {
      seen.push([node.type, node.url, depth]);
    };
    const tree = await sitemapTreeForHomepageWithClient(
      H,
      opts(client, { sitemaps: [`${H}b.xml`, `${H}a.xml`, `${H}gone.xml`], onTreeNode }),
    );
    expect(seen).toEqual(inTreeOrder(tree));
    expect(seen.length).toBe(4);
    seen.length = 0;
    const single = await sitemapTreeForUrlWithClient(`${H}a.xml`, opts(client, { onTreeNode }));
    expect(seen).toEqual([
      ['IndexXMLSitemap', `${H}a.xml`, 0],
      ['PagesXMLSitemap', `${H}b.xml`, 1],
    ]);
    expect(single.url).toBe(`${H}a.xml`);
  });

  it('a listener that throws ends the reports, not the walk', async () => {
    const client = new FakeClient({
      [`${H}robots.txt`]: { body: ['index\n', `${H}a.xml\n`, `${H}b.xml\n`] },
      [`${H}a.xml`]: { body: ['pages\n', `${H}p\n`] },
      [`${H}b.xml`]: { body: ['pages\n', `${H}q\n`] },
    });
    const seen: string[] = [];
    const tree = await sitemapTreeForHomepageWithClient(
      H,
      opts(client, {
        useKnownPaths: false,
        onTreeNode: async ({ node }) => {
          seen.push(node.url);
          if (node.url.endsWith('a.xml')) throw new Error('stdout closed');
        },
      }),
    );
    expect(seen).toEqual([`${H}robots.txt`, `${H}a.xml`]);
    expect([...tree.allPages()].map((p) => p.url)).toEqual([`${H}p`, `${H}q`]);
  });
});

describe("useKnownPaths: 'fallback' and onSkipped", () => {
  it('probes the known paths only when robots.txt names no sitemap', async () => {
    const fallback = opts(new FakeClient({}), { useKnownPaths: 'fallback', knownPaths: ['sitemap.xml'] });
    const cases: [string, Record<string, Route>, string[]][] = [
      // Names one, followed or not: no probe.
      [
        'named',
        { [`${H}robots.txt`]: { body: ['index\n', `${H}a.xml\n`] }, [`${H}a.xml`]: { body: ['pages\n'] } },
        [`${H}robots.txt`, `${H}a.xml`],
      ],
      ['none listed', { [`${H}robots.txt`]: { body: ['index\n'] } }, [`${H}robots.txt`, `${H}sitemap.xml`]],
      ['missing', {}, [`${H}robots.txt`, `${H}sitemap.xml`]],
      // Not read as robots.txt (a redirect to another document): it names nothing.
      [
        'not robots.txt',
        { [`${H}robots.txt`]: { redirect: `${H}home` }, [`${H}home`]: { body: ['html\n'] } },
        [`${H}robots.txt`, `${H}sitemap.xml`],
      ],
    ];
    for (const [name, routes, requests] of cases) {
      const client = new FakeClient(routes);
      await sitemapTreeForHomepageWithClient(H, { ...fallback, webClient: client, concurrency: 1 });
      expect(client.requests, name).toEqual(requests);
    }
    const unfollowed = new FakeClient(cases[0][1]);
    await sitemapTreeForHomepageWithClient(H, {
      ...fallback,
      webClient: unfollowed,
      recurseListCallback: () => [],
    });
    expect(unfollowed.requests).toEqual([`${H}robots.txt`]);
    await expect(
      sitemapTreeForHomepageWithClient(H, opts(new FakeClient({}), { useKnownPaths: 'yes' as never })),
    ).rejects.toThrow(InvalidOptionError);
  });

  it('tells onSkipped each sitemap not requested and why: repeat, too deep, cycle, stopped', async () => {
    const client = new FakeClient({
      [`${H}i0.xml`]: { body: ['index\n', `${H}i1.xml\n`, `${H}leaf.xml\n`, `${H}i0.xml\n`] },
      [`${H}i1.xml`]: { body: ['index\n', `${H}leaf.xml\n`, `${H}i2.xml\n`] },
      [`${H}i2.xml`]: { body: ['index\n', `${H}deep.xml\n`] },
      [`${H}leaf.xml`]: { body: ['pages\n'] },
    });
    const skipped: unknown[] = [];
    await sitemapTreeForUrlWithClient(
      `${H}i0.xml`,
      opts(client, {
        concurrency: 1,
        maxDepth: 2,
        onSkipped: (s) => skipped.push([s.reason, s.url, s.parentUrl, s.level]),
      }),
    );
    expect(skipped).toEqual([
      ['ancestor', `${H}i0.xml`, `${H}i0.xml`, 1],
      ['repeat', `${H}leaf.xml`, `${H}i1.xml`, 2],
      ['too-deep', `${H}deep.xml`, `${H}i2.xml`, 3],
    ]);

    const budget: SkippedSitemap[] = [];
    await sitemapTreeForUrlWithClient(
      `${H}i0.xml`,
      opts(new FakeClient(client.routes), { maxSitemaps: 1, onSkipped: (s) => budget.push(s) }),
    );
    expect(budget.map((s) => [s.reason, s.url])).toEqual([
      ['stopped', `${H}i1.xml`],
      ['stopped', `${H}leaf.xml`],
      ['ancestor', `${H}i0.xml`],
    ]);
    expect(budget[0].message).toBe("Un-fetched child sitemap: the walk's limit of 1 sitemaps was reached");
  });
});
