import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli-helpers.js';

// `usp parse`: one document from a file or stdin, no network.

const URLSET = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
  <url><loc>https://example.com/one</loc><lastmod>2024-01-02</lastmod></url>
  <url>
    <loc>https://example.com/news</loc>
    <news:news>
      <news:publication><news:name>Example</news:name><news:language>en</news:language></news:publication>
      <news:publication_date>2024-01-02T03:04:05Z</news:publication_date>
      <news:title>Hello, "world"</news:title>
    </news:news>
  </url>
</urlset>
`;

const INDEX = `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>https://example.com/a.xml</loc></sitemap>
  <sitemap><loc>/relative.xml</loc></sitemap>
</sitemapindex>
`;

const ROBOTS = 'User-agent: *\nSitemap: https://example.com/sitemap.xml\nSitemap: /other.xml\n';

let dir: string;
const file = (name: string) => join(dir, name);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'usp-parse-'));
  writeFileSync(file('urlset.xml'), URLSET);
  writeFileSync(file('urlset.xml.gz'), gzipSync(URLSET));
  // Gzip is found by its bytes, whatever the name says.
  writeFileSync(file('compressed.bin'), gzipSync(URLSET));
  writeFileSync(file('index.xml'), INDEX);
  writeFileSync(file('robots.txt'), ROBOTS);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('usp parse', () => {
  it('prints a urlset as usp tabtree under the dummy URL', async () => {
    const r = await runCli(['parse', file('urlset.xml')]);
    expect(r).toEqual({
      code: 0,
      stdout: 'http://usp-local-dummy.local/\n\thttps://example.com/one\n\thttps://example.com/news\n',
      stderr: '',
    });
  });

  it('detects gzip by magic bytes, from a file of any name and from stdin', async () => {
    const expected = 'https://example.com/one\nhttps://example.com/news\n';
    expect((await runCli(['parse', '-f', 'pages', file('urlset.xml.gz')])).stdout).toBe(expected);
    expect((await runCli(['parse', '-f', 'pages', file('compressed.bin')])).stdout).toBe(expected);
    const piped = await runCli(['parse', '-f', 'pages', '-'], { input: gzipSync(URLSET) });
    expect(piped).toEqual({ code: 0, stdout: expected, stderr: '' });
  });

  it('prints the JSON form with -f json', async () => {
    const r = await runCli([
      'parse',
      '-f',
      'json',
      '--url',
      'https://example.com/sitemap.xml',
      file('urlset.xml'),
    ]);
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json.type).toBe('PagesXMLSitemap');
    expect(json.url).toBe('https://example.com/sitemap.xml');
    expect(json.pages[1].newsStory).toMatchObject({
      title: 'Hello, "world"',
      publishDate: '2024-01-02T03:04:05+00:00',
      publicationName: 'Example',
      publicationLanguage: 'en',
    });
  });

  it('lists an index child as un-fetched (usp sitemap_from_str) and resolves relative children against --url', async () => {
    const r = await runCli([
      'parse',
      '-f',
      'json',
      '--url',
      'https://example.com/index.xml',
      file('index.xml'),
    ]);
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json.type).toBe('IndexXMLSitemap');
    expect(json.subSitemaps).toEqual([
      { type: 'InvalidSitemap', url: 'https://example.com/a.xml', reason: 'Un-fetched child sitemap' },
      { type: 'InvalidSitemap', url: 'https://example.com/relative.xml', reason: 'Un-fetched child sitemap' },
    ]);
  });

  it('reads robots.txt as robots only when the URL says so', async () => {
    const asText = await runCli(['parse', '-f', 'json', file('robots.txt')]);
    expect(JSON.parse(asText.stdout)).toMatchObject({
      type: 'PagesTextSitemap',
      url: 'http://usp-local-dummy.local/',
    });
    expect(JSON.parse(asText.stdout).pages.map((p: { url: string }) => p.url)).toEqual([]);
    const asRobots = await runCli(['parse', '--url', 'https://example.com/robots.txt', file('robots.txt')]);
    expect(asRobots.code).toBe(0);
    expect(asRobots.stdout).toBe(
      'https://example.com/robots.txt\n\thttps://example.com/sitemap.xml\n\thttps://example.com/other.xml\n',
    );
    expect(asRobots.stderr).toContain('[relative-url]');
  });

  it('streams NDJSON and CSV lines with the sitemap URL', async () => {
    const nd = await runCli([
      'parse',
      '-f',
      'ndjson',
      '--url',
      'https://example.com/s.xml',
      file('urlset.xml'),
    ]);
    const lines = nd.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.sitemap, l.url, l.lastModified])).toEqual([
      ['https://example.com/s.xml', 'https://example.com/one', '2024-01-02T00:00:00'],
      ['https://example.com/s.xml', 'https://example.com/news', null],
    ]);
    const csv = await runCli([
      'parse',
      '-f',
      'csv',
      '--url',
      'https://example.com/s.xml',
      file('urlset.xml'),
    ]);
    expect(csv.stdout.split('\n')[2]).toBe(
      'https://example.com/s.xml,https://example.com/news,0.5,,,"Hello, ""world""",2024-01-02T03:04:05+00:00,Example,en,,,',
    );
  });

  it('strips scheme://host/ with -u', async () => {
    const r = await runCli(['parse', '-u', '--url', 'https://example.com/s.xml', file('urlset.xml')]);
    expect(r.stdout).toBe('https://example.com/s.xml\n\t/one\n\t/news\n');
  });

  it('turns HTML into an InvalidSitemap naming the root element, exit 1 with the reason on stderr', async () => {
    const r = await runCli(['parse', '-f', 'json', '-'], {
      input: '<html><body>Not a sitemap</body></html>',
    });
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout);
    expect(json.type).toBe('InvalidSitemap');
    expect(json.reason).toContain('html');
    // The message names stdin, not the stand-in URL.
    expect(r.stderr).toBe(
      `usp: <stdin>: not a sitemap: ${json.reason.replace('http://usp-local-dummy.local/', '<stdin>')}\n`,
    );
  });

  it('says why a document is not a sitemap, keeps the output, exits 1', async () => {
    const html = await runCli(['parse', '--url', 'https://example.com/s.xml', '-'], {
      input: '<html><body>Not a sitemap</body></html>',
    });
    expect(html.code).toBe(1);
    expect(html.stdout).toBe('https://example.com/s.xml\n');
    expect(html.stderr).toBe(
      'usp: https://example.com/s.xml: not a sitemap: No parsers support sitemap from https://example.com/s.xml: unsupported root element <html>\n',
    );
    const unknown = await runCli(['parse', '-f', 'pages', '-'], { input: '<foo><bar/></foo>' });
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/^usp: \S+: not a sitemap: .*unsupported root element <foo>\n$/);
    writeFileSync(file('empty.xml'), '');
    const empty = await runCli(['parse', file('empty.xml')]);
    expect(empty.code).toBe(1);
    expect(empty.stdout).toBe('http://usp-local-dummy.local/\n');
    expect(empty.stderr).toBe(`usp: ${file('empty.xml')}: not a sitemap: the document is empty\n`);
    const prose = await runCli(['parse', '-f', 'json', '-'], { input: 'Hello, world\n' });
    expect(prose.code).toBe(1);
    expect(JSON.parse(prose.stdout)).toMatchObject({ type: 'PagesTextSitemap', pages: [] });
    expect(prose.stderr.trimEnd().split('\n').at(-1)).toMatch(/: not a sitemap: no URL in it/);
  });

  it('names the file in its messages, the dummy URL staying the base of relative links', async () => {
    writeFileSync(
      file('warn.xml'),
      `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>/rel</loc></url><url><loc>https://example.com/a</loc><lastmod>2024-13-45</lastmod></url></urlset>`,
    );
    const r = await runCli(['parse', file('warn.xml')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('http://usp-local-dummy.local/\n\thttps://example.com/a\n');
    expect(r.stderr).toContain(`[invalid-date] (${file('warn.xml')})`);
    expect(r.stderr).not.toContain('usp-local-dummy');
  });

  it('exits 0 for a sitemap with no URLs in it (an empty urlset is still a sitemap)', async () => {
    const r = await runCli(['parse', '-'], {
      input: '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"></urlset>',
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
  });

  it('fails with one line and exit 1 for a missing file', async () => {
    const r = await runCli(['parse', file('nope.xml')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`usp: error: cannot read ${file('nope.xml')}: no such file\n`);
  });

  it('exits 2 for a --url that is not http(s) and for a malformed --header', async () => {
    const badUrl = await runCli(['parse', '--url', 'file:///etc/passwd', file('urlset.xml')]);
    expect(badUrl.code).toBe(2);
    const badHeader = await runCli(['parse', '-H', 'no colon', file('urlset.xml')]);
    expect(badHeader.code).toBe(2);
    expect(badHeader.stderr).toContain('--header expects "Name: value"');
  });
});
