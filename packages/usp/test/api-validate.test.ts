import { describe, expect, it } from 'vitest';
import { validateDocument } from '../src/index.js';

describe('validateDocument (public API)', () => {
  it('reports each problem of a document in hand with its entry', async () => {
    const xml = `<?xml version="1.0"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://www.example.com/a</loc><priority>2</priority></url>
  <url><loc>https://other.example.org/b</loc></url>
  <url><loc>https://www.example.com/a</loc></url>
</urlset>`;
    const report = await validateDocument(xml, { url: 'https://www.example.com/sitemap.xml' });
    expect(report.ok).toBe(false);
    const byCode = report.findings.map((f) => [f.code, f.entry]);
    expect(byCode).toContainEqual(['invalid-priority', 1]);
    expect(byCode).toContainEqual(['duplicate-url', 3]);
    expect(report.findings.some((f) => f.code === 'cross-host' && f.entry === 2)).toBe(true);
  });

  it('passes a clean document', async () => {
    const xml =
      '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://www.example.com/</loc></url></urlset>';
    const report = await validateDocument(xml, { url: 'https://www.example.com/sitemap.xml' });
    expect(report.findings).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it('counts every entry it read, not only those that became pages', async () => {
    // Three <url> entries: one fine, one whose <loc> is not a URL, one repeating the first.
    const xml = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://www.example.com/a</loc></url>
  <url><loc>not a url</loc></url>
  <url><loc>https://www.example.com/a</loc></url>
</urlset>`;
    const report = await validateDocument(xml, { url: 'https://www.example.com/sitemap.xml' });
    expect(report.sitemaps.map((s) => [s.type, s.entries])).toEqual([['PagesXMLSitemap', 3]]);
    expect(report.findings.map((f) => [f.code, f.entry])).toEqual([
      ['invalid-url', 2],
      ['duplicate-url', 3],
    ]);
  });

  it('locates the findings of a plain-text sitemap by line, of a feed by item', async () => {
    const text = await validateDocument('https://www.example.com/a\n\nftp://x\nhttps://www.example.com/a\n', {
      url: 'https://www.example.com/sitemap.txt',
    });
    expect(text.findings.map((f) => [f.code, f.line])).toEqual([
      ['invalid-url', 3],
      ['duplicate-url', 4],
    ]);
    const rss = await validateDocument(
      '<rss version="2.0"><channel><item><title>t</title></item><item><title>u</title><link>https://www.example.com/b</link></item></channel></rss>',
      { url: 'https://www.example.com/feed.xml' },
    );
    expect(rss.findings.map((f) => [f.code, f.entry])).toEqual([['missing-field', 1]]);
    expect(rss.sitemaps[0].entries).toBe(2);
  });
});
