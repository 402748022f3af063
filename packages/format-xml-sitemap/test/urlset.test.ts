import { InvalidOptionError, PluginConflictError, type XmlExtension } from '@usp-ts/core';
import { googleImage } from '@usp-ts/ext-google-image';
import { googleNews } from '@usp-ts/ext-google-news';
import { describe, expect, it } from 'vitest';
import { SITEMAP_NAMESPACES, xmlSitemap } from '../src/index.js';
import { run } from './registry.js';

const NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';
const urlset = (body: string, ns = `xmlns="${NS}"`) => `<?xml version="1.0"?><urlset ${ns}>${body}</urlset>`;

describe('xmlSitemap() urlset', () => {
  it('reads every field of a page', async () => {
    const r = await run(
      urlset(
        `<url><loc>http://example.com/a</loc><lastmod>2024-01-02T03:04:05+02:00</lastmod><changefreq>daily</changefreq><priority>0.8</priority></url>`,
      ),
    );
    expect(r.type).toBe('PagesXMLSitemap');
    expect(r.pages).toHaveLength(1);
    const p = r.pages[0];
    expect(p.url).toBe('http://example.com/a');
    expect(p.priority).toBe(0.8);
    expect(p.changeFrequency).toBe('daily');
    expect(p.lastModified?.toSourceString()).toBe('2024-01-02T03:04:05+02:00');
    expect(p.newsStory).toBeNull();
    expect(p.images).toBeNull();
    expect(p.alternates).toBeNull();
    expect(p.extensions).toBeUndefined();
    expect(r.warnings).toEqual([]);
  });

  it('gives defaults when fields are absent', async () => {
    const r = await run(urlset('<url><loc>http://example.com/a</loc></url>'));
    expect(r.pages[0]).toEqual({
      url: 'http://example.com/a',
      priority: 0.5,
      lastModified: null,
      changeFrequency: null,
      newsStory: null,
      images: null,
      alternates: null,
    });
  });

  it.each(SITEMAP_NAMESPACES)('reads the namespace %s without a warning', async (ns) => {
    const r = await run(urlset('<url><loc>http://example.com/a</loc></url>', `xmlns="${ns}"`));
    expect(r.pages.map((p) => p.url)).toEqual(['http://example.com/a']);
    expect(r.warnings).toEqual([]);
  });

  it('reads a urlset without a namespace (cdc.gov) with a missing-namespace warning', async () => {
    const r = await run(urlset('<url><loc>http://example.com/a</loc><priority>0.3</priority></url>', ''));
    expect(r.pages.map((p) => [p.url, p.priority])).toEqual([['http://example.com/a', 0.3]]);
    expect(r.codes).toEqual(['missing-namespace']);
  });

  it('reads a urlset in an unknown namespace, as usp does, with a warning', async () => {
    const r = await run(
      urlset('<url><loc>http://example.com/a</loc></url>', 'xmlns="http://example.com/ns"'),
    );
    expect(r.pages).toHaveLength(1);
    expect(r.codes).toEqual(['missing-namespace']);
  });

  it('reads a prefixed urlset', async () => {
    const r = await run(
      `<s:urlset xmlns:s="${NS}"><s:url><s:loc>http://example.com/a</s:loc><s:priority>0.1</s:priority></s:url></s:urlset>`,
    );
    expect(r.pages.map((p) => [p.url, p.priority])).toEqual([['http://example.com/a', 0.1]]);
  });

  it('reads the <url>s of a urlset nested in a urlset (cdc.gov)', async () => {
    const r = await run(
      '<urlset><urlset><url><loc>http://example.com/a</loc></url><url><loc>http://example.com/b</loc></url></urlset></urlset>',
    );
    expect(r.pages.map((p) => p.url)).toEqual(['http://example.com/a', 'http://example.com/b']);
  });

  it("skips stray elements outside <url> with one warning each and reads the rest ('xml-urlset-stray-element-stops-parsing')", async () => {
    const r = await run(
      urlset(
        '<generator>some CMS</generator><url><loc>http://example.com/1</loc></url><foo><url><loc>http://example.com/in-foo</loc></url></foo><url><loc>http://example.com/2</loc></url><foo/><loc>http://example.com/bare</loc>',
      ),
    );
    expect(r.pages.map((p) => p.url)).toEqual(['http://example.com/1', 'http://example.com/2']);
    expect(r.codes).toEqual(['unknown-element', 'unknown-element', 'unknown-element']);
    expect(r.warnings.map((w) => w.message).join('\n')).toMatch(/<generator>[\s\S]*<foo>[\s\S]*<loc>/);
  });

  it('ignores unknown elements inside <url>, and fields nested below them', async () => {
    const r = await run(
      urlset(
        '<url><loc>http://example.com/a</loc><random_tag>x</random_tag><x:y xmlns:x="urn:x"><priority>0.1</priority></x:y></url>',
      ),
    );
    expect(r.pages.map((p) => [p.url, p.priority])).toEqual([['http://example.com/a', 0.5]]);
    expect(r.warnings).toEqual([]);
  });

  it('strips <loc>', async () => {
    const r = await run(urlset('<url><loc>\n   http://example.com/a  \t</loc></url>'));
    expect(r.pages[0].url).toBe('http://example.com/a');
  });

  it("drops an entry with an empty <loc> and reads on ('xml-urlset-empty-loc-stops-parsing')", async () => {
    const r = await run(
      urlset(
        '<url><loc>http://example.com/kept</loc></url><url><loc></loc></url><url><loc>  </loc></url><url><priority>0.9</priority></url><url><loc>http://example.com/lost</loc></url>',
      ),
    );
    expect(r.pages.map((p) => p.url)).toEqual(['http://example.com/kept', 'http://example.com/lost']);
    expect(r.codes).toEqual(['missing-field', 'missing-field', 'missing-field']);
  });

  it("drops page URLs that are not absolute http(s) and de-duplicates stripped URLs ('xml-urlset-duplicate-and-unvalidated-locs')", async () => {
    const r = await run(
      urlset(
        [
          '<url><loc>http://example.com/a</loc><priority>0.1</priority></url>',
          '<url><loc>http://example.com/a</loc><priority>0.2</priority></url>',
          '<url><loc>  http://example.com/a  </loc><priority>0.3</priority></url>',
          '<url><loc>not a url</loc></url>',
          '<url><loc>/relative/path</loc></url>',
          '<url><loc>javascript:alert(1)</loc></url>',
          '<url><loc>ftp://example.com/f</loc></url>',
          '<url><loc>http://example.com/b</loc></url>',
        ].join(''),
      ),
    );
    expect(r.pages.map((p) => [p.url, p.priority])).toEqual([
      ['http://example.com/a', 0.1],
      ['http://example.com/b', 0.5],
    ]);
    expect(r.codes).toEqual([
      'duplicate-url',
      'duplicate-url',
      'invalid-url',
      'invalid-url',
      'invalid-url',
      'invalid-url',
    ]);
  });

  it('drops URLs longer than maxUrlLength', async () => {
    const long = `http://example.com/${'a'.repeat(100)}`;
    const r = await run(urlset(`<url><loc>${long}</loc></url><url><loc>http://example.com/b</loc></url>`), {
      limits: { maxUrlLength: 50 },
    });
    expect(r.pages.map((p) => p.url)).toEqual(['http://example.com/b']);
    expect(r.codes).toEqual(['invalid-url']);
  });

  it("never lets text before an empty element leak into it ('xml-empty-element-takes-preceding-text')", async () => {
    const r = await run(
      urlset(
        '<url>http://example.com/leaked-into-loc<loc/></url><url><loc>http://example.com/p</loc>0.9<priority/>daily<changefreq/></url>',
      ),
    );
    // The first entry has an empty <loc>: dropped. The second keeps its defaults.
    expect(r.pages).toHaveLength(1);
    expect(r.pages[0]).toMatchObject({ url: 'http://example.com/p', priority: 0.5, changeFrequency: null });
    expect(r.codes).toEqual(['missing-field', 'invalid-priority']);
  });

  it('reads changefreq case-insensitively; an unknown value is "always" with a warning', async () => {
    const r = await run(
      urlset(
        '<url><loc>http://example.com/1</loc><changefreq> Weekly </changefreq></url><url><loc>http://example.com/2</loc><changefreq>fortnightly</changefreq></url><url><loc>http://example.com/3</loc><changefreq></changefreq></url>',
      ),
    );
    expect(r.pages.map((p) => p.changeFrequency)).toEqual(['weekly', 'always', null]);
    expect(r.codes).toEqual(['invalid-changefreq']);
  });

  it('reads priority as a number; out of range, unparseable or empty is 0.5 with a warning', async () => {
    const values = ['0.55555', '1.1', 'high', '', '-0.1', '1E-1'];
    const r = await run(
      urlset(
        values
          .map((v, i) => `<url><loc>http://example.com/${i}</loc><priority>${v}</priority></url>`)
          .join(''),
      ),
    );
    expect(r.pages.map((p) => p.priority)).toEqual([0.55555, 0.5, 0.5, 0.5, 0.5, 0.1]);
    expect(r.codes).toEqual(['invalid-priority', 'invalid-priority', 'invalid-priority', 'invalid-priority']);
  });

  it('reads lastmod with the date parser; an invalid one is null with a warning', async () => {
    const r = await run(
      urlset(
        '<url><loc>http://example.com/1</loc><lastmod>2024-01-02</lastmod></url><url><loc>http://example.com/2</loc><lastmod>not a date</lastmod></url>',
      ),
    );
    expect(r.pages[0].lastModified?.toSourceString()).toBe('2024-01-02T00:00:00');
    expect(r.pages[0].lastModified?.hasZone).toBe(false);
    expect(r.pages[1].lastModified).toBeNull();
    expect(r.codes).toEqual(['invalid-date']);
  });

  it("gives null, never an empty string, for empty elements ('xml-empty-elements-yield-empty-strings')", async () => {
    const r = await run(
      `<urlset xmlns="${NS}" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
<url><loc>http://example.com/a</loc><lastmod></lastmod></url>
<url><loc>http://example.com/b</loc>
  <lastmod/>
</url>
<url><loc>http://example.com/c</loc><news:news><news:publication><news:name></news:name><news:language></news:language></news:publication><news:access></news:access><news:publication_date>2024-01-02</news:publication_date><news:title>T</news:title></news:news></url>
</urlset>`,
    );
    expect(r.pages.map((p) => p.lastModified)).toEqual([null, null, null]);
    expect(r.pages[2].newsStory).toMatchObject({
      title: 'T',
      publicationName: null,
      publicationLanguage: null,
      access: null,
    });
    expect(r.warnings).toEqual([]);
  });

  it('keeps every entry completed before a cut and never half an entry', async () => {
    const xml = urlset(
      '<url><loc>http://example.com/1</loc></url><url><loc>http://example.com/2</loc><priority>0.1</priority></url>',
    );
    const end1 = xml.indexOf('</url>') + '</url>'.length;
    const urls = async (cut: number) => (await run(xml.slice(0, cut))).pages.map((p) => p.url);
    expect(await urls(end1 - 1)).toEqual([]);
    expect(await urls(end1)).toEqual(['http://example.com/1']);
    expect(await urls(xml.lastIndexOf('</url>') + 5)).toEqual(['http://example.com/1']);
    const cut = await run(xml.slice(0, end1 + 20));
    expect(cut.truncated).toBe(true);
    expect(cut.warnings.map((w) => w.code)).toContain('truncated');
  });

  it('stops reading once the page budget is spent', async () => {
    const body = [1, 2, 3, 4].map((i) => `<url><loc>http://example.com/${i}</loc></url>`).join('');
    const r = await run(urlset(body), { limits: { maxPagesPerDocument: 2 } });
    expect(r.pages.map((p) => p.url)).toEqual(['http://example.com/1', 'http://example.com/2']);
  });

  it('hands elements of claimed namespaces to the extensions', async () => {
    const format = xmlSitemap({ extensions: [googleNews(), googleImage()] });
    const r = await run(
      `<urlset xmlns="${NS}" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
        <url><loc>http://example.com/a</loc>
          <image:image><image:loc>http://example.com/i.jpg</image:loc><image:title>T</image:title></image:image>
          <news:news><news:publication_date>2024-01-02</news:publication_date><news:title>Story</news:title></news:news>
          <priority>0.3</priority>
        </url>
      </urlset>`,
      { format },
    );
    expect(r.pages).toHaveLength(1);
    expect(r.pages[0].priority).toBe(0.3);
    expect(r.pages[0].images).toEqual([
      { loc: 'http://example.com/i.jpg', caption: null, geoLocation: null, title: 'T', license: null },
    ]);
    expect(r.pages[0].newsStory?.title).toBe('Story');
  });

  it('ignores extension elements when no extension claims them', async () => {
    const r = await run(
      `<urlset xmlns="${NS}" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"><url><loc>http://example.com/a</loc><image:image><image:loc>http://example.com/i.jpg</image:loc></image:image></url></urlset>`,
      { format: xmlSitemap() },
    );
    expect(r.pages[0].images).toBeNull();
    expect(r.warnings).toEqual([]);
  });
});

describe('xmlSitemap() options', () => {
  it('has the documented shape', async () => {
    const f = xmlSitemap();
    expect(f.kind).toBe('xml');
    expect(f.name).toBe('xml-sitemap');
    expect(f.roots).toContainEqual({ ns: NS, local: 'urlset' });
    expect(f.roots).toContainEqual({ ns: NS, local: 'sitemapindex' });
    expect(f.roots).toContainEqual({ ns: '', local: 'urlset' });
    expect(f.roots).toContainEqual({ ns: 'http://www.google.com/schemas/sitemap/0.84', local: 'urlset' });
  });

  it('throws PluginConflictError when two extensions claim one namespace', async () => {
    expect(() => xmlSitemap({ extensions: [googleNews(), googleNews()] })).toThrow(PluginConflictError);
  });

  it('throws InvalidOptionError for options of the wrong type', async () => {
    expect(() => xmlSitemap({ extensions: 'news' as unknown as XmlExtension[] })).toThrow(InvalidOptionError);
    expect(() => xmlSitemap({ extensions: [{} as XmlExtension] })).toThrow(InvalidOptionError);
    expect(() => xmlSitemap(null as unknown as object)).toThrow(InvalidOptionError);
    const claimsSitemaps: XmlExtension = {
      name: 'x',
      namespaces: [NS],
      create: () => ({ open() {}, close() {} }),
    };
    expect(() => xmlSitemap({ extensions: [claimsSitemaps] })).toThrow(InvalidOptionError);
  });
});
