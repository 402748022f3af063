import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasCorpus, readCase } from '../src/corpus.js';
import { diffRequestCounts, type SiteServer, serveSiteCase, serveSiteDir } from '../src/site-server.js';

interface Raw {
  status: number;
  reason: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A raw GET: no decoding of Content-Encoding, so the bytes on the wire are visible. */
function rawGet(origin: string, path: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(origin);
    // An options object keeps the path verbatim (a URL string would resolve dot segments).
    get({ hostname, port, path }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          reason: res.statusMessage ?? '',
          headers: res.headers,
          body: Buffer.concat(chunks),
        }),
      );
      res.on('error', reject);
    }).on('error', reject);
  });
}

describe('serveSiteDir', () => {
  let dir: string;
  let srv: SiteServer;
  const preGzipped = gzipSync(Buffer.from('<urlset>encoded 127.0.0.1:PORT</urlset>'));
  const brokenGzip = gzipSync(Buffer.from('<urlset>127.0.0.1:PORT</urlset>')).subarray(0, 20);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'usp-site-'));
    mkdirSync(join(dir, 'x'));
    writeFileSync(join(dir, 'robots.txt'), 'Sitemap: http://127.0.0.1:PORT/s.xml\n');
    writeFileSync(join(dir, 'plain.xml'), '<urlset><url><loc>http://127.0.0.1:PORT/a</loc></url></urlset>');
    writeFileSync(join(dir, 's.xml.gz'), gzipSync(Buffer.from('<loc>http://127.0.0.1:PORT/gz</loc>')));
    writeFileSync(join(dir, 'broken.gz'), brokenGzip);
    writeFileSync(join(dir, 'enc.xml'), preGzipped);
    writeFileSync(join(dir, 'x', 'y~ü.xml'), 'decoded path');
    writeFileSync(
      join(dir, 'site.json'),
      JSON.stringify({
        paths: {
          '/robots.txt': { headers: { 'Content-Type': 'text/plain' } },
          '/moved': { status: 301, headers: { Location: 'http://127.0.0.1:PORT/plain.xml' }, body: '' },
          '/teapot': {
            status: 418,
            reason: 'Short And Stout',
            headers: { 'X-A': 'b' },
            body: 'inline 127.0.0.1:PORT',
          },
          '/q?page=2': { headers: { 'Content-Type': 'text/plain' }, body: 'with query' },
          '/enc.xml': { headers: { 'Content-Type': 'application/xml', 'Content-Encoding': 'gzip' } },
          '/sitemap_%C3%BC.xml': { headers: { 'Content-Type': 'application/xml' }, body: 'verbatim key' },
        },
        default: {
          status: 404,
          reason: 'Nope',
          headers: { 'Content-Type': 'text/html' },
          body: '<h1>gone</h1>',
        },
      }),
    );
    srv = await serveSiteDir(dir, 'http://127.0.0.1:PORT');
  });
  afterAll(async () => {
    await srv.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('binds 127.0.0.1 and fills the homepage port', () => {
    expect(srv.origin).toBe(`http://127.0.0.1:${srv.port}`);
    expect(srv.homepage).toBe(srv.origin);
  });

  it('answers a listed path with exactly its headers and the file, port filled in', async () => {
    const r = await rawGet(srv.origin, '/robots.txt');
    expect(r.status).toBe(200);
    expect(r.reason).toBe('OK');
    expect(r.headers['content-type']).toBe('text/plain');
    expect(r.body.toString()).toBe(`Sitemap: http://127.0.0.1:${srv.port}/s.xml\n`);
    expect(Number(r.headers['content-length'])).toBe(r.body.length);
  });

  it('answers an unlisted file 200 without Content-Type', async () => {
    const r = await rawGet(srv.origin, '/plain.xml');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBeUndefined();
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(r.body.toString()).toContain(`http://127.0.0.1:${srv.port}/a`);
  });

  it('uses status, reason and inline body, templating headers too', async () => {
    const t = await rawGet(srv.origin, '/teapot');
    expect([t.status, t.reason, t.headers['x-a'], t.body.toString()]).toEqual([
      418,
      'Short And Stout',
      'b',
      `inline 127.0.0.1:${srv.port}`,
    ]);
    const m = await rawGet(srv.origin, '/moved');
    expect(m.status).toBe(301);
    expect(m.reason).toBe('Moved Permanently');
    expect(m.headers.location).toBe(`http://127.0.0.1:${srv.port}/plain.xml`);
  });

  it('answers anything else with the default, site.json included', async () => {
    for (const path of ['/nothing.xml', '/site.json', '/../site.json', '/%2e%2e/site.json']) {
      const r = await rawGet(srv.origin, path);
      expect([r.status, r.reason, r.body.toString()]).toEqual([404, 'Nope', '<h1>gone</h1>']);
    }
  });

  it('templates inside a complete gzip stream and leaves a broken one byte for byte', async () => {
    const gz = await rawGet(srv.origin, '/s.xml.gz');
    expect(gunzipSync(gz.body).toString()).toBe(`<loc>http://127.0.0.1:${srv.port}/gz</loc>`);
    const broken = await rawGet(srv.origin, '/broken.gz');
    expect(broken.body.equals(brokenGzip)).toBe(true);
  });

  it('sends a Content-Encoding file as stored (templated), for the client to decode', async () => {
    const r = await rawGet(srv.origin, '/enc.xml');
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(r.body).toString()).toBe(`<urlset>encoded 127.0.0.1:${srv.port}</urlset>`);
  });

  it('matches path?query first, then the path; keys verbatim; files by decoded path', async () => {
    expect((await rawGet(srv.origin, '/q?page=2')).body.toString()).toBe('with query');
    expect((await rawGet(srv.origin, '/robots.txt?x=1')).status).toBe(200);
    expect((await rawGet(srv.origin, '/q?page=3')).status).toBe(404);
    expect((await rawGet(srv.origin, '/sitemap_%C3%BC.xml')).body.toString()).toBe('verbatim key');
    expect((await rawGet(srv.origin, '/x/y~%C3%BC.xml')).body.toString()).toBe('decoded path');
    expect((await rawGet(srv.origin, '/x/y%7E%C3%BC.xml')).body.toString()).toBe('decoded path');
  });

  it('logs requests as expected_requests.json counts them', async () => {
    const before = srv.requestCounts()['GET /nothing.xml -> 404'] ?? 0;
    await rawGet(srv.origin, '/nothing.xml');
    expect(srv.requestCounts()['GET /nothing.xml -> 404']).toBe(before + 1);
    expect(srv.requests).toContain('GET /robots.txt -> 200');
  });
});

describe.skipIf(!hasCorpus())('serveSiteCase', () => {
  it('serves a corpus site with the port filled in', async () => {
    const c = readCase('site-gzip-detection');
    const srv = await serveSiteCase(c.name);
    try {
      expect(srv.homepage).toBe(`http://127.0.0.1:${srv.port}`);
      const robots = await rawGet(srv.origin, '/robots.txt');
      expect(robots.status).toBe(200);
      expect(robots.body.toString()).toContain(`127.0.0.1:${srv.port}`);
      expect(robots.body.toString()).not.toContain('127.0.0.1:PORT');
      const enc = await rawGet(srv.origin, '/sitemap_4.xml');
      expect(enc.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(enc.body).toString()).toContain(`127.0.0.1:${srv.port}`);
      expect((await rawGet(srv.origin, '/sitemap.xml')).status).toBe(404);
    } finally {
      await srv.close();
    }
  });
});

describe('diffRequestCounts', () => {
  it('lists every key whose count differs, in key order', () => {
    expect(diffRequestCounts({ 'GET /a -> 200': 1 }, { 'GET /a -> 200': 1 })).toEqual([]);
    expect(
      diffRequestCounts(
        { 'GET /b -> 503': 2, 'GET /a -> 200': 1 },
        { 'GET /b -> 503': 5, 'GET /c -> 404': 1, 'GET /a -> 200': 1 },
      ),
    ).toEqual(['GET /b -> 503: 2 request(s), usp made 5', 'GET /c -> 404: 0 request(s), usp made 1']);
  });
});
