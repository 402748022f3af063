import { describe, expect, it } from 'vitest';
import { runCli } from './cli-helpers.js';

describe('usp demo', () => {
  it('serves the example site, lists it as a tabtree, closes the server and exits 0', async () => {
    const r = await runCli(['demo']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    const origin = /^(http:\/\/127\.0\.0\.1:\d+)\/$/.exec(lines[0])?.[1];
    expect(origin).toBeDefined();
    const strip = (l: string) => l.replace(origin as string, '');
    const outline = lines.map(strip);
    expect(outline).toEqual(
      expect.arrayContaining([
        '\t/robots.txt',
        '\t\t/sitemap_index.xml',
        '\t\t\t/sitemap-pages.xml.gz',
        '\t\t\t\t/de/',
        '\t\t\t/sitemap-products.xml',
        '\t\t\t/sitemap-images.xml',
        '\t\t\t/sitemap-video.xml',
        '\t\t\t\t/videos/descaling-a-kettle',
        '\t\t\t/sitemap-blog.txt',
        '\t\t/news-sitemap.xml',
        '\t\t\t/news/summer-sale',
        '\t\t/feed.rss',
        '\t\t\t/blog/the-perfect-brew',
        '\t\t/atom.xml',
        '\t\t\t/changelog/gift-cards',
        '\t\t/old-sitemap.xml',
        // Found by probing the well-known paths, not through robots.txt.
        '\t/sitemap.xml',
      ]),
    );
    // The truncated sitemap keeps the entries completed before the cut.
    const products = outline.indexOf('\t\t\t/sitemap-products.xml');
    expect(outline.slice(products + 1, products + 4)).toEqual([
      '\t\t\t\t/products/kettle',
      '\t\t\t\t/products/teapot',
      '\t\t\t\t/products/mug',
    ]);
    expect(outline[products + 4]).toBe('\t\t\t/sitemap-images.xml');
    expect(r.stderr).toContain('usp demo: serving an example site at');
    expect(r.stderr).toContain('old-sitemap.xml');
  });

  it('takes -f and -u like ls', async () => {
    const r = await runCli(['demo', '-f', 'json']);
    expect(r.code).toBe(0);
    const tree = JSON.parse(r.stdout);
    const video = JSON.stringify(tree).includes('Descaling a kettle in two minutes');
    expect(video).toBe(true);
    const pages = await runCli(['demo', '-f', 'pages', '-u']);
    expect(pages.stdout.split('\n')).toContain('/products/kettle');
  });
});
