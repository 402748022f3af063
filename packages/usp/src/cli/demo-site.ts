import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';

/** One file of the demo site. */
export interface DemoFile {
  readonly contentType: string;
  readonly body: string;
  /** Served gzip-compressed as the file itself (a `.gz` sitemap), not as transport encoding. */
  readonly gzip?: boolean;
}

const URLSET = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"';

/**
 * An example shop with every kind of sitemap usp reads, plus the usual damage: a truncated
 * sitemap and one that robots.txt names but the server does not have. `o` is the origin.
 */
export function demoSiteFiles(o: string): Record<string, DemoFile> {
  const xml = (body: string): DemoFile => ({
    contentType: 'application/xml',
    body: `<?xml version="1.0" encoding="UTF-8"?>\n${body}`,
  });
  return {
    '/robots.txt': {
      contentType: 'text/plain',
      body: [
        '# usp demo shop',
        'User-agent: *',
        'Disallow: /checkout/',
        '',
        `Sitemap: ${o}/sitemap_index.xml`,
        `Sitemap: ${o}/news-sitemap.xml`,
        `Sitemap: ${o}/feed.rss`,
        `Sitemap: ${o}/atom.xml`,
        `Sitemap: ${o}/old-sitemap.xml`,
        '',
      ].join('\n'),
    },
    '/sitemap_index.xml': xml(`<sitemapindex ${URLSET}>
  <sitemap><loc>${o}/sitemap-pages.xml.gz</loc><lastmod>2025-06-01T09:00:00+02:00</lastmod></sitemap>
  <sitemap><loc>${o}/sitemap-products.xml</loc><lastmod>2025-06-02</lastmod></sitemap>
  <sitemap><loc>${o}/sitemap-images.xml</loc></sitemap>
  <sitemap><loc>${o}/sitemap-video.xml</loc></sitemap>
  <sitemap><loc>${o}/sitemap-blog.txt</loc></sitemap>
</sitemapindex>
`),
    '/sitemap-pages.xml.gz': {
      contentType: 'application/gzip',
      gzip: true,
      body: `<?xml version="1.0" encoding="UTF-8"?>
<urlset ${URLSET} xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <url>
    <loc>${o}/</loc>
    <lastmod>2025-06-01</lastmod><changefreq>daily</changefreq><priority>1.0</priority>
    <xhtml:link rel="alternate" hreflang="en" href="${o}/"/>
    <xhtml:link rel="alternate" hreflang="de" href="${o}/de/"/>
    <xhtml:link rel="alternate" hreflang="x-default" href="${o}/"/>
  </url>
  <url>
    <loc>${o}/de/</loc>
    <lastmod>2025-06-01</lastmod><changefreq>daily</changefreq><priority>0.9</priority>
    <xhtml:link rel="alternate" hreflang="en" href="${o}/"/>
    <xhtml:link rel="alternate" hreflang="de" href="${o}/de/"/>
  </url>
  <url><loc>${o}/about</loc><changefreq>yearly</changefreq><priority>0.3</priority></url>
  <url><loc>${o}/contact</loc><changefreq>yearly</changefreq><priority>0.3</priority></url>
</urlset>
`,
    },
    // Cut off in the middle of an entry, as a server that died mid-response leaves it.
    '/sitemap-products.xml': xml(`<urlset ${URLSET}>
  <url><loc>${o}/products/kettle</loc><lastmod>2025-05-30T12:00:00Z</lastmod></url>
  <url><loc>${o}/products/teapot</loc><lastmod>2025-05-29T12:00:00Z</lastmod></url>
  <url><loc>${o}/products/mug</loc><lastmod>2025-05-28T12:00:00Z</lastmod></url>
  <url><loc>${o}/products/str`),
    '/sitemap-images.xml':
      xml(`<urlset ${URLSET} xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url>
    <loc>${o}/gallery/kitchen</loc>
    <image:image><image:loc>${o}/img/kitchen-1.jpg</image:loc></image:image>
    <image:image><image:loc>${o}/img/kitchen-2.jpg</image:loc></image:image>
  </url>
  <url>
    <loc>${o}/gallery/garden</loc>
    <image:image><image:loc>${o}/img/garden.jpg</image:loc></image:image>
  </url>
</urlset>
`),
    '/sitemap-video.xml':
      xml(`<urlset ${URLSET} xmlns:video="http://www.google.com/schemas/sitemap-video/1.1">
  <url>
    <loc>${o}/videos/descaling-a-kettle</loc>
    <video:video>
      <video:thumbnail_loc>${o}/thumbs/descaling.jpg</video:thumbnail_loc>
      <video:title>Descaling a kettle in two minutes</video:title>
      <video:description>Vinegar, water, patience.</video:description>
      <video:content_loc>${o}/media/descaling.mp4</video:content_loc>
      <video:duration>124</video:duration>
      <video:publication_date>2025-05-20T08:00:00+00:00</video:publication_date>
      <video:family_friendly>yes</video:family_friendly>
    </video:video>
  </url>
</urlset>
`),
    '/sitemap-blog.txt': {
      contentType: 'text/plain',
      body: `${o}/blog/\n${o}/blog/choosing-a-teapot\n${o}/blog/the-perfect-brew\n`,
    },
    '/news-sitemap.xml': xml(`<urlset ${URLSET} xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
  <url>
    <loc>${o}/news/summer-sale</loc>
    <news:news>
      <news:publication><news:name>Demo Shop News</news:name><news:language>en</news:language></news:publication>
      <news:publication_date>2025-06-01T08:00:00+02:00</news:publication_date>
      <news:title>Summer sale starts today</news:title>
      <news:keywords>sale, summer, kettles</news:keywords>
    </news:news>
  </url>
  <url>
    <loc>${o}/news/new-store</loc>
    <news:news>
      <news:publication><news:name>Demo Shop News</news:name><news:language>en</news:language></news:publication>
      <news:publication_date>2025-05-15</news:publication_date>
      <news:title>We opened a store in Leeds</news:title>
    </news:news>
  </url>
</urlset>
`),
    '/feed.rss': {
      contentType: 'application/rss+xml',
      body: `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0">
  <channel>
    <title>Demo Shop blog</title>
    <link>${o}/blog/</link>
    <description>Tea, kettles and everything around them</description>
    <item>
      <title>The perfect brew</title>
      <link>${o}/blog/the-perfect-brew</link>
      <pubDate>Sun, 01 Jun 2025 10:00:00 +0100</pubDate>
    </item>
    <item>
      <title>Choosing a teapot</title>
      <link>${o}/blog/choosing-a-teapot</link>
      <pubDate>Tue, 20 May 2025 10:00:00 +0100</pubDate>
    </item>
  </channel>
</rss>
`,
    },
    '/atom.xml': {
      contentType: 'application/atom+xml',
      body: `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Demo Shop changelog</title>
  <link href="${o}/changelog"/>
  <updated>2025-06-01T12:00:00Z</updated>
  <id>${o}/changelog</id>
  <entry>
    <title>Free delivery over 30 pounds</title>
    <link href="${o}/changelog/free-delivery"/>
    <id>${o}/changelog/free-delivery</id>
    <updated>2025-06-01T12:00:00Z</updated>
  </entry>
  <entry>
    <title>Gift cards</title>
    <link href="${o}/changelog/gift-cards"/>
    <id>${o}/changelog/gift-cards</id>
    <updated>2025-05-10T12:00:00Z</updated>
  </entry>
</feed>
`,
    },
    // Not in robots.txt: found by probing the known paths, as usp does.
    '/sitemap.xml': xml(`<urlset ${URLSET}>
  <url><loc>${o}/legacy/catalogue-2019</loc></url>
</urlset>
`),
  };
}

export interface DemoServer {
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  /** Requests received, `GET /path -> status`. */
  readonly requests: string[];
  close(): Promise<void>;
}

/** Serves the demo site on 127.0.0.1 on a random port; anything else is a 404 page. */
/** `port` 0 (the default): any free port. */
export async function startDemoServer(port = 0): Promise<DemoServer> {
  const sockets = new Set<Socket>();
  const requests: string[] = [];
  let files: Record<string, { contentType: string; body: Buffer }> = {};
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const file = Object.hasOwn(files, path) ? files[path] : undefined;
    if (file === undefined || req.method !== 'GET') {
      requests.push(`${req.method} ${path} -> 404`);
      res.writeHead(404, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end('<!DOCTYPE html><html><body><h1>Not found</h1></body></html>');
      return;
    }
    requests.push(`${req.method} ${path} -> 200`);
    res.writeHead(200, { 'Content-Type': file.contentType, 'Content-Length': file.body.length });
    res.end(file.body);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  files = Object.fromEntries(
    Object.entries(demoSiteFiles(origin)).map(([path, f]) => [
      path,
      { contentType: f.contentType, body: f.gzip ? gzipSync(f.body) : Buffer.from(f.body) },
    ]),
  );
  return {
    origin,
    requests,
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
