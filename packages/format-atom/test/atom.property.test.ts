import { createRegistry, isPagesSitemap, parseSitemap } from '@usp-ts/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ATOM_03_NAMESPACE, ATOM_10_NAMESPACE, atom } from '../src/index.js';

const registry = createRegistry([atom()]);
const slug = fc.stringMatching(/^[a-z0-9]{1,8}$/);

/** A feed whose Atom namespace is bound to `prefix` ('' for the default namespace). */
function build(slugs: string[], ns: string, prefix: string): { xml: string; ends: number[] } {
  const q = (local: string) => (prefix === '' ? local : `${prefix}:${local}`);
  const decl = prefix === '' ? (ns === '' ? '' : ` xmlns="${ns}"`) : ` xmlns:${prefix}="${ns}"`;
  let xml = `<?xml version="1.0"?><${q('feed')}${decl}><${q('title')}>F</${q('title')}>`;
  const ends: number[] = [];
  slugs.forEach((s, i) => {
    xml += `<${q('entry')}><${q('title')}>T${i}</${q('title')}><${q('link')} rel="edit" href="http://example.com/${i}/edit"/><${q('link')} href="http://example.com/${i}/${s}"/></${q('entry')}>`;
    ends.push(xml.length);
  });
  xml += `</${q('feed')}>`;
  return { xml, ends };
}

async function pageUrls(xml: string): Promise<string[]> {
  const r = await parseSitemap({ url: 'http://example.com/atom.xml', body: xml, registry });
  return isPagesSitemap(r.sitemap) ? r.sitemap.pages.map((p) => p.url) : [];
}

describe('atom properties', () => {
  it('a feed cut at any point keeps exactly the entries completed before the cut', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(slug, { minLength: 1, maxLength: 6 }), fc.nat(), async (slugs, at) => {
        const { xml, ends } = build(slugs, ATOM_10_NAMESPACE, '');
        const cut = at % (xml.length + 1);
        const complete = ends.filter((end) => end <= cut).length;
        expect(await pageUrls(xml.slice(0, cut))).toEqual(
          slugs.slice(0, complete).map((s, i) => `http://example.com/${i}/${s}`),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('the namespace prefix and the Atom version change nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(slug, { minLength: 1, maxLength: 4 }),
        fc.constantFrom(ATOM_10_NAMESPACE, ATOM_03_NAMESPACE),
        fc.stringMatching(/^[a-z]{1,6}$/).filter((p) => !p.startsWith('xml')),
        async (slugs, ns, prefix) => {
          const expected = slugs.map((s, i) => `http://example.com/${i}/${s}`);
          expect(await pageUrls(build(slugs, ns, '').xml)).toEqual(expected);
          expect(await pageUrls(build(slugs, ns, prefix).xml)).toEqual(expected);
          expect(await pageUrls(build(slugs, '', '').xml)).toEqual(expected);
        },
      ),
      { numRuns: 100 },
    );
  });
});
