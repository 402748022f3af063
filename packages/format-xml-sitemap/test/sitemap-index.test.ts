import { describe, expect, it } from 'vitest';
import { xmlSitemap } from '../src/index.js';
import { drive } from './mini-xml.js';

const NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';
const index = (body: string, ns = `xmlns="${NS}"`) =>
  `<?xml version="1.0"?><sitemapindex ${ns}>${body}</sitemapindex>`;
const format = xmlSitemap();
const children = (r: ReturnType<typeof drive>) =>
  r.children.map((c) => [c.url, c.lastModified ? c.lastModified.toISOString() : null]);

describe('xmlSitemap() sitemapindex', () => {
  it('gives the children in document order with their <lastmod>', () => {
    const r = drive(
      format,
      index(
        '<sitemap><loc>http://example.com/1.xml</loc><lastmod>2024-01-02T03:04:05Z</lastmod></sitemap><sitemap><lastmod>2024-02-01</lastmod><loc> http://example.com/2.xml </loc></sitemap><sitemap><loc>http://example.com/3.xml</loc></sitemap>',
      ),
    );
    expect(r.outcome.type).toBe('IndexXMLSitemap');
    expect(r.pages).toEqual([]);
    expect(children(r)).toEqual([
      ['http://example.com/1.xml', '2024-01-02T03:04:05+00:00'],
      ['http://example.com/2.xml', '2024-02-01T00:00:00'],
      ['http://example.com/3.xml', null],
    ]);
    expect(r.warnings).toEqual([]);
  });

  it("skips non-http locs, resolves relative ones, de-duplicates, and only counts <loc> in <sitemap> ('xml-index-edge-cases')", () => {
    const r = drive(
      format,
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
    expect(r.warnings.map((w) => w.code)).toEqual([
      'duplicate-url',
      'relative-url',
      'invalid-url',
      'unknown-element',
    ]);
  });

  it('reads an index without a namespace with a warning', () => {
    const r = drive(format, index('<sitemap><loc>http://example.com/1.xml</loc></sitemap>', ''));
    expect(r.children.map((c) => c.url)).toEqual(['http://example.com/1.xml']);
    expect(r.warnings.map((w) => w.code)).toEqual(['missing-namespace']);
  });

  it('skips entries with an empty or missing <loc>, and stray elements, and reads on', () => {
    const r = drive(
      format,
      index(
        '<sitemap><loc></loc></sitemap><generator>x</generator><sitemap><lastmod>2024-01-01</lastmod></sitemap><sitemap><loc>http://example.com/ok.xml</loc><foo><loc>http://example.com/deep.xml</loc></foo></sitemap>',
      ),
    );
    expect(r.children.map((c) => c.url)).toEqual(['http://example.com/ok.xml']);
    expect(r.warnings.map((w) => w.code)).toEqual(['missing-field', 'unknown-element', 'missing-field']);
  });

  it('reads an invalid <lastmod> as null with a warning', () => {
    const r = drive(
      format,
      index('<sitemap><loc>http://example.com/1.xml</loc><lastmod>yesterday</lastmod></sitemap>'),
    );
    expect(children(r)).toEqual([['http://example.com/1.xml', null]]);
    expect(r.warnings.map((w) => w.code)).toEqual(['invalid-date']);
  });

  it('never emits a half-read entry of a cut index', () => {
    const xml = `<sitemapindex xmlns="${NS}"><sitemap><loc>http://example.com/1.xml</loc></sitemap><sitemap><loc>http://example.com/2.xml</loc>`;
    const r = drive(format, xml);
    expect(r.children.map((c) => c.url)).toEqual(['http://example.com/1.xml']);
  });

  it('stops once the fan-out cap is hit', () => {
    const body = [1, 2, 3].map((i) => `<sitemap><loc>http://example.com/${i}.xml</loc></sitemap>`).join('');
    const r = drive(format, index(body), { limits: { maxChildrenPerIndex: 2 } });
    expect(r.children).toHaveLength(2);
  });

  it('drops child URLs longer than maxUrlLength', () => {
    const r = drive(format, index(`<sitemap><loc>http://example.com/${'a'.repeat(60)}.xml</loc></sitemap>`), {
      limits: { maxUrlLength: 50 },
    });
    expect(r.children).toEqual([]);
    expect(r.warnings.map((w) => w.code)).toEqual(['invalid-url']);
  });
});
