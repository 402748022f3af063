import { describe, expect, it } from 'vitest';
import { parseSitemapDocument } from '../src/index.js';

// A URL is checked as a URL: a host the WHATWG parser (the fetcher's) refuses can never be
// fetched, so the page, child sitemap or Sitemap: line is dropped with `invalid-url`.

describe('URLs with a host the WHATWG parser refuses', () => {
  it('drops a page whose host holds < or >, keeping the others and their original text', async () => {
    const xml = `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <url><loc>http://example.com&amp;&gt;&lt;x/</loc></url>
      <url><loc>http://example.com/ok?a=1&amp;b=%7E</loc></url></urlset>`;
    const r = await parseSitemapDocument(xml, { url: 'http://example.com/sitemap.xml' });
    expect([...r.sitemap.allPages()].map((p) => p.url)).toEqual(['http://example.com/ok?a=1&b=%7E']);
    expect(r.warnings.filter((w) => w.code === 'invalid-url').map((w) => w.message)).toEqual([
      'Page URL has no valid host, skipped: http://example.com&><x/',
    ]);
  });

  it('drops such a child sitemap and such a robots.txt Sitemap: line', async () => {
    const index = `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <sitemap><loc>http://exa&lt;mple.com/a.xml</loc></sitemap><sitemap><loc>http://example.com/b.xml</loc></sitemap></sitemapindex>`;
    const r = await parseSitemapDocument(index, { url: 'http://example.com/index.xml' });
    expect(r.children.map((c) => c.url)).toEqual(['http://example.com/b.xml']);
    const robots = await parseSitemapDocument(
      'Sitemap: http://exa>mple.com/s.xml\nSitemap: http://example.com/t.xml\n',
      {
        url: 'http://example.com/robots.txt',
      },
    );
    expect(robots.children.map((c) => c.url)).toEqual(['http://example.com/t.xml']);
    expect(robots.warnings.some((w) => w.code === 'invalid-url')).toBe(true);
  });
});

describe('an HTML page where a sitemap was expected', () => {
  it('is "HTML page, not a sitemap", while an XML DOCTYPE is still refused for security', async () => {
    const html = await parseSitemapDocument('<!DOCTYPE html>\n<html><body>Not found</body></html>', {
      url: 'http://example.com/sitemap.xml',
    });
    expect(html.sitemap.type).toBe('InvalidSitemap');
    expect(html.warnings.map((w) => [w.code, w.message])).toEqual([
      ['not-a-sitemap', 'HTML page, not a sitemap (it declares <!DOCTYPE html>)'],
    ]);
    const xml = await parseSitemapDocument(
      '<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY x "y">]><urlset/>',
      {
        url: 'http://example.com/sitemap.xml',
      },
    );
    expect(xml.warnings.map((w) => w.code)).toEqual(['doctype-refused']);
  });
});
