import { describeFormatKit } from '@usp-ts/testkit';
import { rss } from '../src/index.js';

const NAMESPACES =
  'xmlns:atom="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:content="http://purl.org/rss/1.0/modules/content/"';

const plain = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0">
  <channel>
    <title>Feed</title><link>http://example.com/</link><description>d</description>
    <item><title>One</title><link>http://example.com/1</link><pubDate>Thu, 17 Dec 2009 12:04:56 +0200</pubDate></item>
    <item><description>Two &amp; more</description><link>http://example.com/2</link></item>
    <item><title>No link</title></item>
    <item><title>Three</title><link>/3</link><pubDate>not a date</pubDate></item>
    <item><title>Dup</title><link>http://example.com/1</link></item>
    <item><title><![CDATA[Four <b>]]></title><link>https://example.com/4?a=1&amp;b=2</link></item>
  </channel>
</rss>
`;

const prefixed = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" ${NAMESPACES}>
  <channel>
    <atom:link href="http://example.com/feed.rss" rel="self"/>
    <item>
      <atom:link/><title>One</title><media:title>Media</media:title><link>http://example.com/1</link>
      <dc:date>2020-01-01</dc:date><content:encoded><![CDATA[<p>x</p>]]></content:encoded>
    </item>
    <item><title>Two</title><link>http://example.com/2</link><media:content url="http://example.com/v.mp4"/></item>
  </channel>
</rss>
`;

// RSS in a default namespace, so the kit can move every prefix around.
const defaultNs = `<?xml version="1.0"?>
<rss xmlns="http://backend.userland.com/rss2" ${NAMESPACES} version="2.0"><channel>
  <item><title>A</title><atom:link href="http://example.com/a/amp"/><link>http://example.com/a</link><dc:creator>x</dc:creator></item>
  <item><title>B</title><link>http://example.com/b</link><media:group><media:title>m</media:title></media:group></item>
</channel></rss>`;

describeFormatKit({
  name: '@usp-ts/format-rss',
  plugins: [rss()],
  samples: [
    { name: 'plain', url: 'http://example.com/feed.rss', input: plain },
    { name: 'foreign namespaces', url: 'http://example.com/feed.rss', input: prefixed },
    { name: 'default namespace', url: 'http://example.com/feed.rss', input: defaultNs },
  ],
});
