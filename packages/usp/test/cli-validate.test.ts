import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli-helpers.js';

// `usp validate` against a real server on 127.0.0.1 and on files.

const NET = ['--allow-private-networks', '--retries', '1', '--timeout', '5s'];
const XML = { 'Content-Type': 'application/xml; charset=utf-8' };
const NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';

interface Finding {
  severity: string;
  code: string;
  message: string;
  sitemap: string;
  entry?: number;
  line?: number;
}

let server: TestServer;
let o: string;

beforeAll(async () => {
  server = await startTestServer();
  o = server.origin;
  server.route('/good.xml', {
    headers: XML,
    body: `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="${NS}">\n<url><loc>${o}/a</loc><lastmod>2024-01-02</lastmod><changefreq>daily</changefreq><priority>0.7</priority></url>\n<url><loc>${o}/b</loc></url>\n</urlset>\n`,
  });
  server.route('/bad.xml', {
    headers: XML,
    body: [
      `<?xml version="1.0" encoding="UTF-8"?>`,
      `<urlset xmlns="${NS}">`,
      `<url><loc>${o}/ok</loc></url>`,
      `<url><loc>${o}/date</loc><lastmod>2024-13-45</lastmod></url>`,
      `<url><loc>${o}/prio</loc><priority>1.5</priority></url>`,
      `<url><loc>${o}/freq</loc><changefreq>sometimes</changefreq></url>`,
      '<url><loc>https://elsewhere.example/page</loc></url>',
      `<url><loc>${o}/ok</loc></url>`,
      '</urlset>',
    ].join('\n'),
  });
  server.route('/nested/map.xml', {
    headers: XML,
    body: `<urlset xmlns="${NS}"><url><loc>${o}/nested/in</loc></url><url><loc>${o}/out</loc></url></urlset>`,
  });
  server.route('/no-ns.xml', { headers: XML, body: `<urlset><url><loc>${o}/x</loc></url></urlset>` });
  server.route('/wrong-ns.xml', {
    headers: XML,
    body: `<urlset xmlns="http://www.google.com/schemas/sitemap/0.84"><url><loc>${o}/x</loc></url></urlset>`,
  });
  server.route('/html.xml', {
    headers: { 'Content-Type': 'text/html' },
    body: '<!DOCTYPE html>\n<html><head><title>Oops</title></head><body>Not found</body></html>',
  });
  server.route('/text-as-xml.xml', {
    headers: { 'Content-Type': 'text/plain' },
    body: `<urlset xmlns="${NS}"><url><loc>${o}/x</loc></url></urlset>`,
  });
  server.route('/index.xml', {
    headers: XML,
    body: `<sitemapindex xmlns="${NS}"><sitemap><loc>${o}/good.xml</loc></sitemap><sitemap><loc>${o}/gone.xml</loc></sitemap></sitemapindex>`,
  });
  server.route('/robots.txt', {
    headers: { 'Content-Type': 'text/plain' },
    body: `User-agent: *\nSitemap: ${o}/good.xml\n`,
  });
  // 30 pages on another host and 12 bad dates: a report that must be cut short.
  server.route('/noisy.xml', {
    headers: XML,
    body: `<urlset xmlns="${NS}">${Array.from({ length: 30 }, (_, i) => `<url><loc>https://cdn.example/p${i}</loc></url>`).join('')}${Array.from({ length: 12 }, (_, i) => `<url><loc>${o}/d${i}</loc><lastmod>2024-13-${i + 10}</lastmod></url>`).join('')}</urlset>`,
  });
});

afterAll(async () => {
  await server.close();
});

async function validateJson(args: string[]): Promise<{
  code: number | null;
  report: { ok: boolean; findings: Finding[]; sitemaps: { url: string; type: string; entries: number }[] };
}> {
  const r = await runCli(['validate', ...NET, '-f', 'json', ...args]);
  expect(r.stderr).toBe('');
  return { code: r.code, report: JSON.parse(r.stdout) };
}

describe('usp validate', () => {
  it('exits 0 on a clean sitemap, with a human report', async () => {
    const r = await runCli(['validate', ...NET, `${o}/good.xml`]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `${o}/good.xml (PagesXMLSitemap, 2 entries, ${r.stdout.match(/(\d+) bytes/)?.[1]} bytes): ok\n\nno findings in 1 sitemap\n`,
    );
  });

  it('reports each problem with the entry it is in, exit 1', async () => {
    const { code, report } = await validateJson([`${o}/bad.xml`]);
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    const found = report.findings.map((f) => [f.code, f.entry]);
    expect(found).toEqual(
      expect.arrayContaining([
        ['invalid-date', 2],
        ['invalid-priority', 3],
        ['invalid-changefreq', 4],
        ['cross-host', 5],
      ]),
    );
    expect(report.findings.some((f) => f.code === 'duplicate-url' && f.entry === 6)).toBe(true);
    for (const f of report.findings) expect(f.sitemap).toBe(`${o}/bad.xml`);
  });

  it('prints findings in the human report as severity, location, code, message', async () => {
    const r = await runCli(['validate', ...NET, `${o}/bad.xml`]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^ {2}error {3}entry 2 {6}invalid-date {8}\S/m);
    expect(r.stdout).toMatch(
      /^ {2}error {3}entry 5 {6}cross-host {10}URL https:\/\/elsewhere\.example\/page is not on/m,
    );
    expect(r.stdout).toMatch(/\d+ errors?, \d+ warnings? in 1 sitemap\n$/);
  });

  it('flags URLs outside the sitemap directory', async () => {
    const { report } = await validateJson([`${o}/nested/map.xml`]);
    expect(report.findings.map((f) => [f.code, f.entry])).toEqual([['outside-directory', 2]]);
  });

  it('flags a missing and a wrong namespace', async () => {
    const missing = await validateJson([`${o}/no-ns.xml`]);
    expect(missing.report.findings.filter((f) => f.code === 'missing-namespace')).toHaveLength(1);
    const wrong = await validateJson([`${o}/wrong-ns.xml`]);
    expect(wrong.report.findings.map((f) => f.code)).toContain('wrong-namespace');
  });

  it('flags HTML served instead of a sitemap and a wrong Content-Type', async () => {
    const html = await validateJson([`${o}/html.xml`]);
    expect(html.code).toBe(1);
    expect(html.report.findings.map((f) => f.code)).toEqual(['html']);
    const text = await validateJson([`${o}/text-as-xml.xml`]);
    expect(text.report.findings.map((f) => [f.severity, f.code])).toEqual([['warning', 'content-type']]);
  });

  it('shows at most --max-per-code findings of one code per sitemap, counts the rest, and sums up by code', async () => {
    const r = await runCli(['validate', ...NET, `${o}/noisy.xml`]);
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.filter((l) => /^ {2}error +entry \d+ +cross-host /.test(l))).toHaveLength(10);
    expect(lines.filter((l) => /^ {2}error +entry \d+ +invalid-date /.test(l))).toHaveLength(10);
    expect(lines).toContain('  … and 20 more [cross-host]');
    expect(lines).toContain('  … and 2 more [invalid-date]');
    // The ones shown are the first, in document order.
    expect(lines[1]).toMatch(/entry 1 +cross-host +URL https:\/\/cdn\.example\/p0 /);
    expect(lines.slice(-4)).toEqual([
      'summary:',
      '  error   cross-host          30',
      '  error   invalid-date        12',
      '42 errors, 0 warnings in 1 sitemap',
    ]);
    const three = await runCli(['validate', ...NET, '--max-per-code', '3', `${o}/noisy.xml`]);
    expect(three.stdout).toContain('  … and 27 more [cross-host]');
    expect(three.stdout.split('\n').filter((l) => l.includes(' cross-host '))).toHaveLength(3 + 1);
    const all = await runCli(['validate', ...NET, '--max-per-code', '0', `${o}/noisy.xml`]);
    expect(all.stdout).not.toContain('more [');
    expect(all.stdout.split('\n').filter((l) => /^ {2}error +entry /.test(l))).toHaveLength(42);
    // JSON keeps every finding.
    const { report } = await validateJson(['--max-per-code', '1', `${o}/noisy.xml`]);
    expect(report.findings).toHaveLength(42);
    const bad = await runCli(['validate', '--max-per-code', 'x', `${o}/noisy.xml`]);
    expect(bad.code).toBe(2);
  });

  it('follows an index to its children and reports the one that cannot be fetched', async () => {
    const { code, report } = await validateJson([`${o}/index.xml`]);
    expect(code).toBe(1);
    expect(report.sitemaps.map((s) => [s.url, s.type])).toEqual([
      [`${o}/index.xml`, 'IndexXMLSitemap'],
      [`${o}/good.xml`, 'PagesXMLSitemap'],
      [`${o}/gone.xml`, 'InvalidSitemap'],
    ]);
    expect(report.findings.map((f) => [f.sitemap, f.code])).toEqual([[`${o}/gone.xml`, 'fetch']]);
    const shallow = await validateJson(['--no-follow', `${o}/index.xml`]);
    expect(shallow.code).toBe(0);
    expect(shallow.report.sitemaps).toHaveLength(1);
  });

  it('starts from robots.txt when given a homepage', async () => {
    const { code, report } = await validateJson([`${o}/`]);
    expect(code).toBe(0);
    expect(report.sitemaps.map((s) => s.type)).toEqual(['IndexRobotsTxtSitemap', 'PagesXMLSitemap']);
  });

  it('falls back to /sitemap.xml when a homepage has no robots.txt', async () => {
    const bare = await startTestServer({
      '/sitemap.xml': {
        headers: XML,
        body: `<urlset xmlns="${NS}"><url><loc>http://127.0.0.1/x</loc></url></urlset>`,
      },
    });
    try {
      bare.route('/sitemap.xml', {
        headers: XML,
        body: `<urlset xmlns="${NS}"><url><loc>${bare.origin}/x</loc></url></urlset>`,
      });
      const { code, report } = await validateJson([`${bare.origin}/`]);
      expect(code).toBe(1);
      expect(report.findings.map((f) => [f.severity, f.code])).toEqual([['warning', 'no-sitemap']]);
      expect(report.sitemaps.map((s) => [s.url, s.type])).toEqual([
        [`${bare.origin}/robots.txt`, 'InvalidSitemap'],
        [`${bare.origin}/sitemap.xml`, 'PagesXMLSitemap'],
      ]);
    } finally {
      await bare.close();
    }
  });

  describe('files', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'usp-validate-'));
    });
    afterAll(() => {
      rmSync(dir, { recursive: true, force: true });
    });

    it('gives line numbers in a plain-text sitemap', async () => {
      const path = join(dir, 'list.txt');
      writeFileSync(
        path,
        'https://example.com/a\nnot a url\r\nhttps://example.com/b\n\nftp://example.com/c\n',
      );
      const { code, report } = await validateJson([path]);
      expect(code).toBe(1);
      expect(report.findings.map((f) => [f.code, f.line])).toEqual([
        ['invalid-url', 2],
        ['invalid-url', 5],
      ]);
    });

    it('reports a repeated URL in a plain-text sitemap with its line', async () => {
      const path = join(dir, 'dup.txt');
      writeFileSync(path, 'http://e.com/t1\nnot a url\nhttp://e.com/t1\nhttp://e.com/t2\n');
      const { code, report } = await validateJson([path]);
      expect(code).toBe(1);
      expect(report.findings.map((f) => [f.severity, f.code, f.line])).toEqual([
        ['error', 'invalid-url', 2],
        ['warning', 'duplicate-url', 3],
      ]);
      expect(report.findings[1].message).toContain('http://e.com/t1');
      const human = await runCli(['validate', path]);
      expect(human.stdout).toMatch(
        /^ {2}warning +line 3 +duplicate-url +Line 3 "http:\/\/e\.com\/t1" repeats line 1/m,
      );
    });

    it('counts more than 50,000 URLs', async () => {
      const path = join(dir, 'big.xml');
      const urls = Array.from(
        { length: 50_001 },
        (_, i) => `<url><loc>https://example.com/p${i}</loc></url>`,
      );
      writeFileSync(path, `<urlset xmlns="${NS}">${urls.join('')}</urlset>`);
      const { code, report } = await validateJson(['--url', 'https://example.com/sitemap.xml', path]);
      expect(code).toBe(1);
      expect(report.findings.map((f) => f.code)).toEqual(['too-many-urls']);
      expect(report.sitemaps[0].entries).toBe(50_001);
    });

    it('names the file in the report and in JSON, not the dummy URL', async () => {
      const path = join(dir, 'named.xml');
      writeFileSync(
        path,
        `<urlset xmlns="${NS}"><url><loc>https://example.com/a</loc><lastmod>2024-13-45</lastmod></url></urlset>`,
      );
      const human = await runCli(['validate', path]);
      expect(human.stdout.split('\n')[0]).toBe(`${path} (PagesXMLSitemap, 1 entry, ${98 + NS.length} bytes)`);
      expect(human.stdout).not.toContain('usp-local-dummy');
      const { report } = await validateJson([path]);
      expect(report.findings[0].sitemap).toBe(path);
      const html = await runCli(['validate', '-'], { input: '<html><body>hi</body></html>' });
      expect(html.stdout.split('\n')[0]).toBe('<stdin> (not a sitemap)');
    });

    it('checks hosts only when --url says where the file lives', async () => {
      const path = join(dir, 'hosts.xml');
      writeFileSync(path, `<urlset xmlns="${NS}"><url><loc>https://example.com/a</loc></url></urlset>`);
      expect((await validateJson([path])).code).toBe(0);
      const elsewhere = await validateJson(['--url', 'https://other.example/sitemap.xml', path]);
      expect(elsewhere.report.findings.map((f) => [f.code, f.entry])).toEqual([['cross-host', 1]]);
    });
  });
});
