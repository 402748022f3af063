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
});
