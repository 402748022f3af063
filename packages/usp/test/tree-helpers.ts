import { gzipSync } from 'node:zlib';
import {
  type IndexSitemap,
  type InvalidSitemap,
  isIndexSitemap,
  type Sitemap,
  type TreeOptions,
  type WalkPagesWithClientOptions,
} from '@usp-ts/core';
import { createWebClient, type FetcherWebClient, type WebClientOptions } from '@usp-ts/fetcher';
import { createDefaultRegistry } from '../src/plugins/defaults.js';

/** Fast, loopback-friendly client settings: tests never wait on production timeouts. */
export function testClient(extra: WebClientOptions = {}): FetcherWebClient {
  return createWebClient({
    allowPrivateNetworks: true,
    retries: 2,
    baseDelayMs: 5,
    maxDelayMs: 20,
    maxRetryAfterMs: 50,
    connectTimeoutMs: 2_000,
    headersTimeoutMs: 2_000,
    bodyIdleTimeoutMs: 2_000,
    requestTimeoutMs: 5_000,
    ...extra,
  });
}

const registry = createDefaultRegistry();

export function treeOptions(
  client: FetcherWebClient,
  extra: Partial<WalkPagesWithClientOptions> = {},
): WalkPagesWithClientOptions {
  return { webClient: client, registry, ...extra } satisfies TreeOptions;
}

export function urlset(urls: readonly string[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls
    .map((u) => `  <url><loc>${u}</loc></url>\n`)
    .join('')}</urlset>\n`;
}

export function sitemapIndex(urls: readonly string[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls
    .map((u) => `  <sitemap><loc>${u}</loc></sitemap>\n`)
    .join('')}</sitemapindex>\n`;
}

export function robots(urls: readonly string[]): string {
  return `User-agent: *\nDisallow: /private\n${urls.map((u) => `Sitemap: ${u}\n`).join('')}`;
}

export const gzip = (s: string): Buffer => gzipSync(Buffer.from(s));

export const XML = { 'Content-Type': 'application/xml' };
export const TEXT = { 'Content-Type': 'text/plain' };

/** `type url [reason]` lines of a tree, indented, for compact assertions. */
export function outline(s: Sitemap, depth = 0): string[] {
  const pad = '  '.repeat(depth);
  const line =
    s.type === 'InvalidSitemap'
      ? `${pad}${s.type} ${s.url} :: ${(s as InvalidSitemap).reason}`
      : `${pad}${s.type} ${s.url}${'pageCount' in s ? ` (${(s as { pageCount: number }).pageCount})` : ''}`;
  const out = [line];
  if (isIndexSitemap(s)) for (const c of (s as IndexSitemap).subSitemaps) out.push(...outline(c, depth + 1));
  return out;
}

/** Resolves once `cond()` holds, polling on the event loop (bounded by the test's own timeout). */
export async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
}
