import { describe, expect, it } from 'vitest';
import { createRegistry } from '../src/contract/registry.js';
import { isPagesSitemap } from '../src/contract/sitemap.js';
import { parseSitemap } from '../src/engine/parse-sitemap.js';
import { SITEMAP_NS, tinyUrlset } from './tiny-formats.js';

// Pages after the root element closes are not read (the document is over), but they are never
// lost silently: the caller gets a warning saying what was ignored.
const registry = createRegistry([tinyUrlset()]);
const url = 'http://example.com/sitemap.xml';
const page = (n: number) => `<url><loc>http://example.com/${n}</loc></url>`;

async function parse(xml: string) {
  const doc = await parseSitemap({ url, body: xml, registry });
  if (!isPagesSitemap(doc.sitemap)) throw new Error(`expected pages, got ${doc.sitemap.type}`);
  return { urls: doc.sitemap.pages.map((p) => p.url), warnings: doc.warnings };
}

describe('content after the root element', () => {
  it('warns about a second root element and keeps the first one’s pages', async () => {
    const r = await parse(`<urlset xmlns="${SITEMAP_NS}">${page(1)}</urlset><urlset>${page(2)}</urlset>`);
    expect(r.urls).toEqual(['http://example.com/1']);
    const w = r.warnings.filter((x) => x.code === 'malformed-xml');
    expect(w).toHaveLength(1);
    expect(w[0].message).toContain('after the end of the root element <urlset');
  });

  it('warns once about text after the root, however long', async () => {
    const r = await parse(`<urlset xmlns="${SITEMAP_NS}">${page(1)}</urlset>\n${'junk '.repeat(10_000)}`);
    expect(r.urls).toEqual(['http://example.com/1']);
    expect(r.warnings.filter((x) => x.code === 'malformed-xml')).toHaveLength(1);
  });

  it('says nothing about whitespace or comments after the root', async () => {
    const r = await parse(`<urlset xmlns="${SITEMAP_NS}">${page(1)}</urlset>\n<!-- generated -->\n\n`);
    expect(r.urls).toEqual(['http://example.com/1']);
    expect(r.warnings).toEqual([]);
  });
});
