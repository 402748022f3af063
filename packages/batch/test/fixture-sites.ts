import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { createRegistry, type Registry } from '@usp-ts/core';
import { googleNews } from '@usp-ts/ext-google-news';
import { robotsTxt } from '@usp-ts/format-robots';
import { xmlSitemap } from '@usp-ts/format-xml-sitemap';
import type { Route } from '@usp-ts/test-server';

export function testRegistry(): Registry {
  return createRegistry([robotsTxt(), xmlSitemap({ extensions: [googleNews()] })]);
}

export interface Doc {
  body: string;
  /** Send an ETag and answer If-None-Match (default true). */
  etag?: boolean;
  gzip?: boolean;
}

/** A site whose documents can be edited between runs; requests are counted per path. */
export class FixtureSite {
  readonly docs = new Map<string, Doc>();
  readonly hits = new Map<string, number>();
  /** Requests that carried If-None-Match or If-Modified-Since, per path. */
  readonly conditional = new Map<string, number>();
  inFlight = 0;
  maxInFlight = 0;
  /** Bytes of bodies sent (304s send none). */
  bytesSent = 0;
  /** Hold every answer this long (ms), to make concurrency visible. */
  delayMs = 0;

  set(path: string, body: string, options: Omit<Doc, 'body'> = {}): void {
    this.docs.set(path, { body, ...options });
  }

  readonly route: Route = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
    if (req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined) {
      this.conditional.set(path, (this.conditional.get(path) ?? 0) + 1);
    }
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
      const doc = this.docs.get(path);
      if (doc === undefined) {
        res.writeHead(404, { 'content-type': 'text/html' });
        res.end('<h1>404</h1>');
        return;
      }
      const bytes = doc.gzip === true ? gzipSync(doc.body) : Buffer.from(doc.body);
      const headers: Record<string, string> = {
        'content-type': path.endsWith('.txt') ? 'text/plain' : 'application/xml',
      };
      if (doc.etag !== false) {
        const tag = `"${createHash('sha1').update(doc.body).digest('hex').slice(0, 16)}"`;
        headers.etag = tag;
        if (req.headers['if-none-match'] === tag) {
          res.writeHead(304, headers);
          res.end();
          return;
        }
      }
      this.bytesSent += bytes.length;
      res.writeHead(200, headers);
      res.end(bytes);
    } finally {
      this.inFlight--;
    }
  };

  hitsOf(path: string): number {
    return this.hits.get(path) ?? 0;
  }

  resetHits(): void {
    this.hits.clear();
    this.conditional.clear();
  }
}

export function urlset(urls: { loc: string; lastmod?: string }[]): string {
  const items = urls
    .map(
      (u) =>
        `<url><loc>${u.loc}</loc>${u.lastmod !== undefined ? `<lastmod>${u.lastmod}</lastmod>` : ''}</url>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${items}</urlset>`;
}

export function sitemapIndex(children: { loc: string; lastmod?: string }[]): string {
  const items = children
    .map(
      (c) =>
        `<sitemap><loc>${c.loc}</loc>${c.lastmod !== undefined ? `<lastmod>${c.lastmod}</lastmod>` : ''}</sitemap>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${items}</sitemapindex>`;
}

/** A Google News sitemap: one story a URL, published on `date`. */
export function newsUrlset(urls: { loc: string; date: string }[]): string {
  const items = urls
    .map(
      (u) =>
        `<url><loc>${u.loc}</loc><news:news><news:publication><news:name>Daily</news:name><news:language>en</news:language></news:publication><news:publication_date>${u.date}</news:publication_date><news:title>Story ${u.loc}</news:title></news:news></url>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">${items}</urlset>`;
}
