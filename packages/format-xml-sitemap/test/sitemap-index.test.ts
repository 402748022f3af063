import { describe, expect, it } from 'vitest';
import { type Parsed, run } from './registry.js';

const NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';
const index = (body: string, ns = `xmlns="${NS}"`) =>
  `<?xml version="1.0"?><sitemapindex ${ns}>${body}</sitemapindex>`;
const children = (r: Parsed) =>
  r.children.map((c) => [c.url, c.lastModified ? c.lastModified.toSourceString() : null]);

describe('xmlSitemap() sitemapindex', () => {
  it('gives the children in document order with their <lastmod>', async () => {
    const r = await run(
      index(
        '<sitemap><loc>http://example.com/1.xml</loc><lastmod>2024-01-02T03:04:05Z</lastmod></sitemap><sitemap><lastmod>2024-02-01</lastmod><loc> http://example.com/2.xml </loc></sitemap><sitemap><loc>http://example.com/3.xml</loc></sitemap>',
      ),
    );
    expect(r.type).toBe('IndexXMLSitemap');
    expect(r.pages).toEqual([]);
    expect(children(r)).toEqual([
      ['http://example.com/1.xml', '2024-01-02T03:04:05+00:00'],
      ['http://example.com/2.xml', '2024-02-01T00:00:00'],
      ['http://example.com/3.xml', null],
    ]);
    expect(r.warnings).toEqual([]);
  });

  it("skips non-http locs, resolves relative ones, de-duplicates, and only counts <loc> in <sitemap> ('xml-index-edge-cases')", async () => {
    const r = await run(
      index(
        [
          '<sitemap><loc>http://example.com/a.xml</loc></sitemap>',
          '<sitemap><loc>  http://example.com/a.xml  </loc></sitemap>',
          '<sitemap><loc>/relative.xml</loc></sitemap>',
          '<sitemap><loc>ftp://example.com/b.xml</loc></sitemap>',
          '<sitemap><loc>http://example.com/c.xml?x=1&amp;amp;y=2</loc></sitemap>',
          '<url><loc>http://example.com/page-inside-index.html</loc></url>',
        ].join(''),
      ),
      { url: 'http://example.com/index.xml' },
    );
    expect(r.children.map((c) => c.url)).toEqual([
      'http://example.com/a.xml',
      'http://example.com/relative.xml',
      // Entities are decoded once: `&amp;amp;` is the text `&amp;`.
      'http://example.com/c.xml?x=1&amp;y=2',
    ]);
    expect(r.codes).toEqual(['duplicate-url', 'relative-url', 'invalid-url', 'unknown-element']);
  });

  it('reads an index without a namespace with a warning', async () => {
    const r = await run(index('<sitemap><loc>http://example.com/1.xml</loc></sitemap>', ''));
    expect(r.children.map((c) => c.url)).toEqual(['http://example.com/1.xml']);
    expect(r.codes).toEqual(['missing-namespace']);
  });

  it('skips entries with an empty or missing <loc>, and stray elements, and reads on', async () => {
    const r = await run(
      index(
        '<sitemap><loc></loc></sitemap><generator>x</generator><sitemap><lastmod>2024-01-01</lastmod></sitemap><sitemap><loc>http://example.com/ok.xml</loc><foo><loc>http://example.com/deep.xml</loc></foo></sitemap>',
      ),
    );
    expect(r.children.map((c) => c.url)).toEqual(['http://example.com/ok.xml']);
    expect(r.codes).toEqual(['missing-field', 'unknown-element', 'missing-field']);
  });

  it('reads an invalid <lastmod> as null with a warning', async () => {
    const r = await run(
      index('<sitemap><loc>http://example.com/1.xml</loc><lastmod>yesterday</lastmod></sitemap>'),
    );
    expect(children(r)).toEqual([['http://example.com/1.xml', null]]);
    expect(r.codes).toEqual(['invalid-date']);
  });

  it('never emits a half-read entry of a cut index', async () => {
    const xml = `<sitemapindex xmlns="${NS}"><sitemap><loc>http://example.com/1.xml</loc></sitemap><sitemap><loc>http://example.com/2.xml</loc>`;
    const r = await run(xml);
    expect(r.children.map((c) => c.url)).toEqual(['http://example.com/1.xml']);
  });

  it('stops once the fan-out cap is hit', async () => {
    const body = [1, 2, 3].map((i) => `<sitemap><loc>http://example.com/${i}.xml</loc></sitemap>`).join('');
    const r = await run(index(body), { limits: { maxChildrenPerIndex: 2 } });
    expect(r.children).toHaveLength(2);
  });

  it('drops child URLs longer than maxUrlLength', async () => {
    const r = await run(index(`<sitemap><loc>http://example.com/${'a'.repeat(60)}.xml</loc></sitemap>`), {
      limits: { maxUrlLength: 50 },
    });
    expect(r.children).toEqual([]);
    expect(r.codes).toEqual(['invalid-url']);
  });
});
