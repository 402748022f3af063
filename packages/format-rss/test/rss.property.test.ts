import { createRegistry, isPagesSitemap, parseSitemap } from '@usp-ts/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rss } from '../src/index.js';

const registry = createRegistry([rss()]);

const item = fc.record({
  title: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9 ]{0,11}$/),
  slug: fc.stringMatching(/^[a-z0-9]{1,8}$/),
});
// Prefixes starting with "xml" are reserved.
const prefix = fc.stringMatching(/^[a-z]{1,6}$/).filter((p) => !p.startsWith('xml'));

function build(items: { title: string; slug: string }[], prefix: string): { xml: string; ends: number[] } {
  const ns = prefix === '' ? '' : ` xmlns:${prefix}="http://www.w3.org/2005/Atom"`;
  const atomLink = prefix === '' ? '' : `<${prefix}:link href="http://other.example/" rel="self"/>`;
  let xml = `<?xml version="1.0"?><rss version="2.0"${ns}><channel><title>F</title><link>http://example.com/</link>`;
  const ends: number[] = [];
  items.forEach((it, i) => {
    xml += `<item>${atomLink}<title>${it.title}</title><link>http://example.com/${i}/${it.slug}</link></item>`;
    ends.push(xml.length);
  });
  xml += '</channel></rss>';
  return { xml, ends };
}

async function pageUrls(xml: string): Promise<string[]> {
  const r = await parseSitemap({ url: 'http://example.com/feed.rss', body: xml, registry });
  return isPagesSitemap(r.sitemap) ? r.sitemap.pages.map((p) => p.url) : [];
}

describe('rss properties', () => {
  it('a feed cut at any point keeps exactly the items completed before the cut', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(item, { minLength: 1, maxLength: 6 }), fc.nat(), async (items, at) => {
        const { xml, ends } = build(items, '');
        const cut = at % (xml.length + 1);
        const complete = ends.filter((end) => end <= cut).length;
        const urls = await pageUrls(xml.slice(0, cut));
        expect(urls).toEqual(items.slice(0, complete).map((it, i) => `http://example.com/${i}/${it.slug}`));
      }),
      { numRuns: 300 },
    );
  });

  it('the prefix chosen for a foreign namespace inside items changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(item, { minLength: 1, maxLength: 4 }), prefix, async (items, p) => {
        const plain = await pageUrls(build(items, '').xml);
        expect(await pageUrls(build(items, p).xml)).toEqual(plain);
      }),
      { numRuns: 100 },
    );
  });
});
