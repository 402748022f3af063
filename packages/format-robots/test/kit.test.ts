import { describeFormatKit } from '@usp-ts/testkit';
import { robotsTxt } from '../src/index.js';

describeFormatKit({
  name: '@usp-ts/format-robots',
  plugins: [robotsTxt()],
  samples: [
    {
      name: 'robots with groups and sitemaps',
      url: 'https://example.com/robots.txt',
      input: [
        '# robots.txt for example.com',
        'User-agent: Googlebot',
        'User-agent: bingbot',
        'Disallow: /private/ # keep out',
        'Allow: /private/open$',
        'Crawl-delay: 1',
        '',
        'Sitemap: https://example.com/sitemap.xml',
        'sitemap : /news-sitemap.xml',
        'Site-map: https://example.com/s%C3%BC.xml # unicode',
        'User-agent: *',
        'Disallow: /*.php$',
        'Sitemap: https://example.com/sitemap.xml',
        'Sitemap: https://cdn.example.com/more.xml',
      ].join('\r\n'),
    },
    {
      name: 'robots with unusual line breaks and a BOM',
      url: 'https://example.com/sub/robots.txt',
      input: '\ufeffSitemap: https://example.com/a.xml\u2028Sitemap: b.xml\fUser-agent: *\x85Disallow: /x\r',
    },
  ],
});
