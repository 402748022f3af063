import type { ServerResponse } from 'node:http';
import { startTestServer, type TestServer } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { type ValidateOptions, validateSitemap } from '../src/index.js';

// What `validateSitemap` finds by walking: which documents it reaches, once each, how deep, within
// which budgets, and which hosts a sitemap may name. Real servers on 127.0.0.1.

const NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';
const XML = { 'Content-Type': 'application/xml' };
const TEXT = { 'Content-Type': 'text/plain' };
const NET: ValidateOptions = { webClientOptions: { allowPrivateNetworks: true, retries: 1 } };

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function server(): Promise<TestServer> {
  const s = await startTestServer();
  servers.push(s);
  return s;
}

const urlset = (...locs: string[]) =>
  `<urlset xmlns="${NS}">${locs.map((l) => `<url><loc>${l}</loc></url>`).join('')}</urlset>`;
const index = (...locs: string[]) =>
  `<sitemapindex xmlns="${NS}">${locs.map((l) => `<sitemap><loc>${l}</loc></sitemap>`).join('')}</sitemapindex>`;
const gets = (s: TestServer, path: string) => s.requests.filter((r) => r === `GET ${path}`).length;

describe('validateSitemap walks', () => {
  it('checks a sitemap listed twice once, and does not count the repeats as unchecked', async () => {
    const s = await server();
    const o = s.origin;
    s.route('/index.xml', { headers: XML, body: index(`${o}/a.xml`, `${o}/b.xml`, `${o}/a.xml`) });
    s.route('/a.xml', { headers: XML, body: urlset(`${o}/1`) });
    s.route('/b.xml', { headers: XML, body: index(`${o}/a.xml`) });
    const report = await validateSitemap(`${o}/index.xml`, NET);
    expect(report.sitemaps.map((m) => m.url)).toEqual([`${o}/index.xml`, `${o}/a.xml`, `${o}/b.xml`]);
    // Twice in one index is the parser's finding; once more in another index is no finding.
    expect(report.findings.map((f) => [f.code, f.entry, f.sitemap])).toEqual([
      ['duplicate-url', 3, `${o}/index.xml`],
    ]);
    expect(report.unchecked).toBe(0);
    expect(gets(s, '/a.xml')).toBe(1);
  });

  it('reports a sitemap nested deeper than maxDepth on its index, without fetching it', async () => {
    const s = await server();
    const o = s.origin;
    s.route('/d0.xml', { headers: XML, body: index(`${o}/d1.xml`) });
    s.route('/d1.xml', { headers: XML, body: index(`${o}/d2.xml`) });
    s.route('/d2.xml', { headers: XML, body: index(`${o}/d3.xml`, `${o}/d3b.xml`) });
    s.route('/d3.xml', { headers: XML, body: urlset(`${o}/p`) });
    const report = await validateSitemap(`${o}/d0.xml`, { ...NET, maxDepth: 2 });
    expect(report.sitemaps.map((m) => m.url)).toEqual([`${o}/d0.xml`, `${o}/d1.xml`, `${o}/d2.xml`]);
    expect(report.findings).toEqual([
      {
        severity: 'error',
        code: 'recursion',
        message: `Sitemap ${o}/d3.xml is nested deeper than 2 levels`,
        sitemap: `${o}/d2.xml`,
      },
      {
        severity: 'error',
        code: 'recursion',
        message: `Sitemap ${o}/d3b.xml is nested deeper than 2 levels`,
        sitemap: `${o}/d2.xml`,
      },
    ]);
    expect(report.unchecked).toBe(0);
    expect(gets(s, '/d3.xml')).toBe(0);
  });

  it('tries /sitemap.xml, and no other path, only when robots.txt names no sitemap', async () => {
    const s = await server();
    const o = s.origin;
    s.route('/robots.txt', { headers: TEXT, body: 'User-agent: *\nDisallow: /private\n' });
    s.route('/sitemap.xml', { headers: XML, body: urlset(`${o}/x`) });
    const none = await validateSitemap(`${o}/`, NET);
    expect(none.sitemaps.map((m) => [m.url, m.type])).toEqual([
      [`${o}/robots.txt`, 'IndexRobotsTxtSitemap'],
      [`${o}/sitemap.xml`, 'PagesXMLSitemap'],
    ]);
    expect(none.findings.map((f) => [f.severity, f.code, f.sitemap])).toEqual([
      ['warning', 'no-sitemap', `${o}/robots.txt`],
    ]);
    expect(s.requests).toEqual(['GET /robots.txt', 'GET /sitemap.xml']);

    s.requests.length = 0;
    s.route('/robots.txt', { headers: TEXT, body: `Sitemap: ${o}/named.xml\n` });
    s.route('/named.xml', { headers: XML, body: urlset(`${o}/y`) });
    const named = await validateSitemap(`${o}/`, NET);
    expect(named.sitemaps.map((m) => m.url)).toEqual([`${o}/robots.txt`, `${o}/named.xml`]);
    expect(named.findings).toEqual([]);
    expect(s.requests).toEqual(['GET /robots.txt', 'GET /named.xml']);
  });

  it('checks the fallback sitemap.xml at level 0, as the walk probes a known path', async () => {
    const s = await server();
    const o = s.origin;
    s.route('/sitemap.xml', { headers: XML, body: index(`${o}/a.xml`) });
    s.route('/a.xml', { headers: XML, body: index(`${o}/b.xml`) });
    s.route('/b.xml', { headers: XML, body: urlset(`${o}/x`) });
    const report = await validateSitemap(`${o}/`, { ...NET, maxDepth: 1 });
    expect(report.sitemaps.map((m) => m.url)).toEqual([`${o}/robots.txt`, `${o}/sitemap.xml`, `${o}/a.xml`]);
    expect(report.findings.map((f) => [f.code, f.sitemap])).toEqual([
      ['no-sitemap', `${o}/robots.txt`],
      ['recursion', `${o}/a.xml`],
    ]);
  });

  it('tries sitemap.xml when robots.txt is not read as robots.txt (a redirect to a page)', async () => {
    const s = await server();
    const o = s.origin;
    s.route('/robots.txt', (_req, res) => {
      res.writeHead(302, { Location: `${o}/home` });
      res.end();
    });
    s.route('/home', {
      headers: { 'Content-Type': 'text/html' },
      body: '<!doctype html><html><body>hi</body></html>',
    });
    s.route('/sitemap.xml', { headers: XML, body: urlset(`${o}/x`) });
    const report = await validateSitemap(`${o}/`, NET);
    expect(report.sitemaps.map((m) => [m.url, m.type])).toEqual([
      [`${o}/home`, 'InvalidSitemap'],
      [`${o}/sitemap.xml`, 'PagesXMLSitemap'],
    ]);
    expect(report.findings.map((f) => [f.code, f.sitemap])).toEqual([
      ['redirect', `${o}/home`],
      ['html', `${o}/home`],
    ]);
  });

  it('lets a sitemap named by robots.txt on another host list the robots.txt host, and its children too', async () => {
    const site = await server();
    const cdn = await server();
    site.route('/robots.txt', { headers: TEXT, body: `Sitemap: ${cdn.origin}/index.xml\n` });
    cdn.route('/index.xml', { headers: XML, body: index(`${cdn.origin}/pages.xml`) });
    cdn.route('/pages.xml', { headers: XML, body: urlset(`${site.origin}/a`, `${cdn.origin}/b`) });
    // Not named by robots.txt: the other host's URLs are cross-host.
    cdn.route('/alone.xml', { headers: XML, body: urlset(`${site.origin}/a`) });
    const viaRobots = await validateSitemap(`${site.origin}/`, NET);
    expect(viaRobots.sitemaps.map((m) => m.url)).toEqual([
      `${site.origin}/robots.txt`,
      `${cdn.origin}/index.xml`,
      `${cdn.origin}/pages.xml`,
    ]);
    expect(viaRobots.findings).toEqual([]);
    const alone = await validateSitemap(`${cdn.origin}/alone.xml`, NET);
    expect(alone.findings.map((f) => [f.code, f.entry])).toEqual([['cross-host', 1]]);
  });

  it('counts the documents found but not checked once maxSitemaps is reached', async () => {
    const s = await server();
    const o = s.origin;
    const kids = [1, 2, 3, 4, 5].map((i) => `${o}/k${i}.xml`);
    s.route('/index.xml', { headers: XML, body: index(...kids, kids[0]) });
    for (const k of kids) s.route(new URL(k).pathname, { headers: XML, body: urlset(`${o}/p`) });
    const report = await validateSitemap(`${o}/index.xml`, { ...NET, maxSitemaps: 3, concurrency: 1 });
    expect(report.sitemaps.map((m) => m.url)).toEqual([`${o}/index.xml`, kids[0], kids[1]]);
    expect(report.unchecked).toBe(3);
    expect(s.requests).toHaveLength(3);
    const all = await validateSitemap(`${o}/index.xml`, { ...NET, maxSitemaps: 6 });
    expect(all.unchecked).toBe(0);
    expect(all.sitemaps).toHaveLength(6);
  });

  it('fetches at most `concurrency` documents at once', async () => {
    const s = await server();
    const o = s.origin;
    const kids = Array.from({ length: 7 }, (_, i) => `/c${i}.xml`);
    s.route('/index.xml', { headers: XML, body: index(...kids.map((k) => o + k)) });
    let inFlight = 0;
    let most = 0;
    let arrived = 0;
    const held: ServerResponse[] = [];
    for (const k of kids) {
      s.route(k, (_req, res) => {
        inFlight++;
        arrived++;
        most = Math.max(most, inFlight);
        held.push(res);
        // Answered in pairs: a walk with fewer than two at once would wait here for ever.
        if (held.length === 2 || arrived === kids.length) {
          for (const r of held.splice(0)) {
            inFlight--;
            r.writeHead(200, XML);
            r.end(urlset(`${o}/p`));
          }
        }
      });
    }
    const report = await validateSitemap(`${o}/index.xml`, { ...NET, concurrency: 2 });
    expect(report.sitemaps).toHaveLength(8);
    expect(most).toBe(2);
  });

  it('warns about a redirect and checks the final URL', async () => {
    const s = await server();
    const o = s.origin;
    s.route('/old.xml', (_req, res) => {
      res.writeHead(301, { Location: `${o}/new.xml` });
      res.end();
    });
    s.route('/new.xml', { headers: XML, body: urlset(`${o}/n`) });
    const report = await validateSitemap(`${o}/old.xml`, NET);
    expect(report.sitemaps.map((m) => m.url)).toEqual([`${o}/new.xml`]);
    expect(report.findings).toEqual([
      {
        severity: 'warning',
        code: 'redirect',
        message: `${o}/old.xml redirects to ${o}/new.xml: list the final URL`,
        sitemap: `${o}/new.xml`,
      },
    ]);
  });

  it('checks a sitemap that another one redirects to once, and says where the redirect is', async () => {
    const s = await server();
    const o = s.origin;
    s.route('/index.xml', { headers: XML, body: index(`${o}/a.xml`, `${o}/old.xml`) });
    s.route('/a.xml', {
      headers: XML,
      body: `<urlset xmlns="${NS}"><url><loc>${o}/1</loc><priority>9</priority></url></urlset>`,
    });
    s.route('/old.xml', (_req, res) => {
      res.writeHead(301, { Location: `${o}/a.xml` });
      res.end();
    });
    const report = await validateSitemap(`${o}/index.xml`, { ...NET, concurrency: 1 });
    expect(report.sitemaps.map((m) => m.url)).toEqual([`${o}/index.xml`, `${o}/a.xml`]);
    expect(report.findings.map((f) => [f.code, f.sitemap])).toEqual([
      ['invalid-priority', `${o}/a.xml`],
      ['redirect', `${o}/a.xml`],
    ]);
    // The redirect was followed (the client asks for a.xml again), its body not read a second time.
    expect(report.findings[1].message).toBe(`${o}/old.xml redirects to ${o}/a.xml: list the final URL`);
  });

  it('rejects when aborted: an interrupted check is no report', async () => {
    const s = await server();
    s.route('/a.xml', { headers: XML, body: urlset(`${s.origin}/x`) });
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(validateSitemap(`${s.origin}/a.xml`, { ...NET, signal: controller.signal })).rejects.toThrow(
      'stop',
    );
  });
});
