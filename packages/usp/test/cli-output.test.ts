import { PassThrough } from 'node:stream';
import {
  IndexRobotsTxtSitemap,
  IndexWebsiteSitemap,
  IndexXMLSitemap,
  InvalidSitemap,
  newPageDraft,
  PagesXMLSitemap,
  SitemapDate,
  sitemapToJSON,
} from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { CSV_HEADER, csvLine, Output, stripUrl, writeJsonTree, writeTree } from '../src/cli/output.js';

function capture(tty = false): { out: Output; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.setEncoding('utf8').on('data', (d: string) => {
    text += d;
  });
  Object.assign(stream, { isTTY: tty });
  return { out: new Output(stream), text: () => text };
}

const page = (url: string, extra: Partial<ReturnType<typeof newPageDraft>> = {}) => ({
  ...newPageDraft(url),
  ...extra,
});

function sampleTree(): IndexWebsiteSitemap {
  return new IndexWebsiteSitemap({
    url: 'https://ex.com/',
    subSitemaps: [
      new IndexRobotsTxtSitemap({
        url: 'https://ex.com/robots.txt',
        subSitemaps: [
          new IndexXMLSitemap({
            url: 'https://ex.com/index.xml',
            subSitemaps: [
              new PagesXMLSitemap({
                url: 'https://ex.com/a.xml',
                lastModified: new SitemapDate(Date.UTC(2024, 0, 2), 60),
                pages: [
                  page('https://ex.com/a1', { priority: 0.8, changeFrequency: 'daily' }),
                  page('https://ex.com/a2', {
                    alternates: [{ hreflang: 'de', href: 'https://ex.com/de/a2' }],
                  }),
                ],
              }),
              new InvalidSitemap({
                url: 'https://ex.com/gone.xml',
                reason: 'Unable to fetch sitemap: 404 Not Found',
              }),
              new PagesXMLSitemap({ url: 'https://ex.com/empty.xml', pages: [] }),
              new IndexXMLSitemap({ url: 'https://ex.com/empty-index.xml' }),
            ],
          }),
        ],
      }),
      new PagesXMLSitemap({ url: 'https://ex.com/sitemap.xml', pages: [page('https://other.org/x')] }),
    ],
  });
}

describe('output formats', () => {
  it('writes the JSON form exactly as JSON.stringify(sitemapToJSON(tree), null, 2), streamed', async () => {
    const tree = sampleTree();
    const { out, text } = capture();
    await writeJsonTree(out, tree);
    await out.flush();
    expect(text()).toBe(`${JSON.stringify(sitemapToJSON(tree), null, 2)}\n`);
    for (const node of [...tree.allSitemaps()]) {
      const one = capture();
      await writeJsonTree(one.out, node);
      await one.out.flush();
      expect(one.text()).toBe(`${JSON.stringify(sitemapToJSON(node), null, 2)}\n`);
    }
  });

  it('writes usp tabtree', async () => {
    const { out, text } = capture();
    await writeTree(out, sampleTree(), 'tabtree');
    expect(text()).toBe(
      [
        'https://ex.com/',
        '\thttps://ex.com/robots.txt',
        '\t\thttps://ex.com/index.xml',
        '\t\t\thttps://ex.com/a.xml',
        '\t\t\t\thttps://ex.com/a1',
        '\t\t\t\thttps://ex.com/a2',
        '\t\t\thttps://ex.com/gone.xml',
        '\t\t\thttps://ex.com/empty.xml',
        '\t\t\thttps://ex.com/empty-index.xml',
        '\thttps://ex.com/sitemap.xml',
        '\t\thttps://other.org/x',
        '',
      ].join('\n'),
    );
  });

  it('strips as usp: removeprefix, then a leading slash; no prefix, no change', () => {
    expect(stripUrl('https://ex.com/a', 'https://ex.com/')).toBe('/a');
    expect(stripUrl('https://ex.com/', 'https://ex.com/')).toBe('/');
    expect(stripUrl('https://other.org/x', 'https://ex.com/')).toBe('/https://other.org/x');
    expect(stripUrl('/already', 'https://ex.com/')).toBe('/already');
    expect(stripUrl('https://ex.com/a', '')).toBe('https://ex.com/a');
  });

  it('quotes CSV fields per RFC 4180 and joins alternates', () => {
    expect(CSV_HEADER.split(',')).toHaveLength(12);
    expect(
      csvLine(
        page('https://ex.com/a,b', {
          alternates: [
            { hreflang: 'de', href: 'https://ex.com/de' },
            { hreflang: 'x-default', href: 'https://ex.com/' },
          ],
        }),
        'https://ex.com/s.xml',
      ),
    ).toBe(
      'https://ex.com/s.xml,"https://ex.com/a,b",0.5,,,,,,,,de=https://ex.com/de x-default=https://ex.com/,',
    );
    expect(csvLine(page('https://ex.com/"q"\nx'), 's')).toBe('s,"https://ex.com/""q""\nx",0.5,,,,,,,,,');
    // An extension's data (a third party's own fields included) is the last column, as JSON.
    const withVideo = page('https://ex.com/v', {
      extensions: { videos: [{ title: 'A,b' }], minutes: 25 } as never,
    });
    const json = JSON.stringify({ videos: [{ title: 'A,b' }], minutes: 25 });
    expect(csvLine(withVideo, 's')).toBe(`s,https://ex.com/v,0.5,,,,,,,,,"${json.replaceAll('"', '""')}"`);
  });

  it('escapes control characters of hostile URLs on a terminal only', async () => {
    const tree = new PagesXMLSitemap({
      url: 'https://ex.com/s.xml',
      pages: [page('https://ex.com/\x1b]0;pwned\x07')],
    });
    const tty = capture(true);
    await writeTree(tty.out, tree, 'pages');
    expect(tty.text()).toBe('https://ex.com/\\x1b]0;pwned\\x07\n');
    const pipe = capture(false);
    await writeTree(pipe.out, tree, 'pages');
    expect(pipe.text()).toBe('https://ex.com/\x1b]0;pwned\x07\n');
  });
});
