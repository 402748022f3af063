import { googleImage } from '@usp-ts/ext-google-image';
import { googleNews } from '@usp-ts/ext-google-news';
import { googleVideo } from '@usp-ts/ext-google-video';
import { describeFormatKit } from '@usp-ts/testkit';
import { xmlSitemap } from '../src/index.js';

const urlset = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <generator>CMS</generator>
  <url><loc>https://example.com/a?x=1&amp;y=2</loc><lastmod>2024-01-02T03:04:05+02:00</lastmod><changefreq>Daily</changefreq><priority>0.8</priority>
    <xhtml:link rel="alternate" hreflang="fr" href="https://example.com/fr/a"/><xhtml:link rel="alternate" hreflang="x-default" href="https://example.com/a"/></url>
  <url><loc> https://example.com/b </loc><priority>1.5</priority><changefreq>sometimes</changefreq><lastmod>nope</lastmod></url>
  <url><loc>https://example.com/a?x=1&amp;y=2</loc></url>
  <url><loc>/relative</loc></url>
  <url><loc></loc></url>
  <url><loc>https://example.com/c</loc><lastmod>2024-05</lastmod><priority>.55555</priority></url>
</urlset>
`;

const extensions = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
  xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"
  xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
  xmlns:video="http://www.google.com/schemas/sitemap-video/1.1">
  <url><loc>https://example.com/n</loc>
    <news:news><news:publication><news:name>Times</news:name><news:language>en</news:language></news:publication>
      <news:genres>Blog</news:genres><news:publication_date>2024-01-02T03:04:05Z</news:publication_date>
      <news:title><![CDATA[Été & co]]></news:title><news:keywords>a, b</news:keywords></news:news>
    <image:image><image:loc>https://example.com/1.jpg</image:loc><image:caption>One</image:caption></image:image>
    <image:image><image:loc>https://example.com/2.jpg</image:loc></image:image>
  </url>
  <url><loc>https://example.com/v</loc>
    <video:video><video:thumbnail_loc>https://example.com/t.jpg</video:thumbnail_loc><video:title>V</video:title>
      <video:description>D</video:description><video:content_loc>https://example.com/v.mp4</video:content_loc>
      <video:duration>60</video:duration><video:tag>x</video:tag><video:tag>y</video:tag></video:video>
  </url>
</urlset>
`;

const index = `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>https://example.com/s1.xml</loc><lastmod>2024-01-01</lastmod></sitemap>
  <sitemap><loc>/s2.xml</loc></sitemap>
  <url><loc>https://example.com/not-a-child.xml</loc></url>
  <sitemap><loc>https://example.com/s1.xml</loc></sitemap>
  <sitemap><loc>ftp://example.com/s3.xml</loc></sitemap>
  <sitemap><loc>https://example.com/s4.xml.gz</loc></sitemap>
</sitemapindex>
`;

// cdc.gov: no namespace, a urlset nested in the urlset, an undeclared xhtml prefix.
const bare = `<urlset><urlset>
  <url><loc>https://example.com/x</loc><lastmod>2024-05-08 08:53:11 AM</lastmod><xhtml:link rel="alternate" hreflang="es" href="https://example.com/es/x"/></url>
  <url><loc>https://example.com/y</loc></url>
</urlset></urlset>`;

const prefixed = `<s:urlset xmlns:s="https://www.sitemaps.org/schemas/sitemap/0.9/" xmlns:i="http://www.google.com/schemas/sitemap-image/1.1">
<s:url><s:loc>https://example.com/p</s:loc><i:image><i:loc>https://example.com/p.png</i:loc></i:image></s:url>
<s:url><s:loc>https://example.com/q</s:loc><s:priority>0.1</s:priority></s:url>
</s:urlset>`;

describeFormatKit({
  name: '@usp-ts/format-xml-sitemap',
  plugins: [xmlSitemap({ extensions: [googleNews(), googleImage(), googleVideo()] })],
  samples: [
    { name: 'urlset', url: 'https://example.com/sitemap.xml', input: urlset },
    { name: 'urlset with news, image and video', url: 'https://example.com/ext.xml', input: extensions },
    { name: 'sitemapindex', url: 'https://example.com/index.xml', input: index },
    { name: 'no namespace, nested urlset', url: 'https://example.com/cdc.xml', input: bare },
    { name: 'prefixed', url: 'https://example.com/prefixed.xml', input: prefixed },
  ],
});
