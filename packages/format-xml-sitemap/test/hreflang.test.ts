import { describe, expect, it } from 'vitest';
import { run } from './registry.js';

const NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';
const XHTML = 'http://www.w3.org/1999/xhtml';

describe('hreflang alternates', () => {
  it('keeps alternates in document order, x-default included', async () => {
    const r = await run(
      `<urlset xmlns="${NS}" xmlns:xhtml="${XHTML}"><url>
        <xhtml:link rel="alternate" hreflang="de" href="http://example.com/de"/>
        <loc>http://example.com/en</loc>
        <xhtml:link rel="alternate" hreflang="x-default" href="http://example.com/"/>
        <xhtml:link rel="alternate" hreflang="fr-FR" href=" http://example.com/fr "/>
      </url><url><loc>http://example.com/de</loc></url></urlset>`,
    );
    expect(r.pages[0].alternates).toEqual([
      { hreflang: 'de', href: 'http://example.com/de' },
      { hreflang: 'x-default', href: 'http://example.com/' },
      { hreflang: 'fr-FR', href: 'http://example.com/fr' },
    ]);
    expect(r.pages[1].alternates).toBeNull();
    expect(r.warnings).toEqual([]);
  });

  it('compares rel case-insensitively (usp: case-sensitive)', async () => {
    const r = await run(
      `<urlset xmlns="${NS}" xmlns:xhtml="${XHTML}"><url><loc>http://example.com/en</loc><xhtml:link rel="ALTERNATE" hreflang="fr" href="http://example.com/fr"/></url></urlset>`,
    );
    expect(r.pages[0].alternates).toEqual([{ hreflang: 'fr', href: 'http://example.com/fr' }]);
  });

  it('ignores links missing rel, hreflang or href, with a warning each', async () => {
    const r = await run(
      `<urlset xmlns="${NS}" xmlns:xhtml="${XHTML}"><url><loc>http://example.com/en</loc>
        <xhtml:link rel="alternate" href="http://example.com/fr"/>
        <xhtml:link hreflang="fr-FR" href="http://example.com/fr2"/>
        <xhtml:link rel="alternate" hreflang="en-GB"/>
        <xhtml:link rel="canonical" hreflang="en" href="http://example.com/x"/>
        <xhtml:link rel="alternate" media="only screen and (max-width: 640px)" href="http://example.com/m"/>
      </url></urlset>`,
    );
    expect(r.pages[0].alternates).toBeNull();
    expect(r.codes).toEqual(Array(5).fill('missing-field'));
  });

  it("survives a urlset without a namespace ('xml-no-namespace-drops-hreflang')", async () => {
    const r = await run(
      `<urlset xmlns:xhtml="${XHTML}"><url><loc>http://example.com/en</loc><xhtml:link rel="alternate" hreflang="fr" href="http://example.com/fr"/></url></urlset>`,
    );
    expect(r.pages[0].alternates).toEqual([{ hreflang: 'fr', href: 'http://example.com/fr' }]);
  });

  it('reads an unprefixed <link> and an undeclared xhtml prefix in a namespace-less urlset', async () => {
    const r = await run(
      `<urlset><url><loc>http://example.com/en</loc><link rel="alternate" hreflang="fr" href="http://example.com/fr"/><xhtml:link rel="alternate" hreflang="de" href="http://example.com/de"/></url></urlset>`,
    );
    expect(r.pages[0].alternates).toEqual([
      { hreflang: 'fr', href: 'http://example.com/fr' },
      { hreflang: 'de', href: 'http://example.com/de' },
    ]);
  });

  it('ignores a <link> outside <url> or nested deeper than a field', async () => {
    const r = await run(
      `<urlset xmlns="${NS}" xmlns:xhtml="${XHTML}"><xhtml:link rel="alternate" hreflang="fr" href="http://example.com/fr"/><url><loc>http://example.com/en</loc><foo><xhtml:link rel="alternate" hreflang="de" href="http://example.com/de"/></foo></url></urlset>`,
    );
    expect(r.pages[0].alternates).toBeNull();
    expect(r.codes).toEqual(['unknown-element']);
  });
});
