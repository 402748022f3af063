import { describeFormatKit, extensionHost, wrapEntries } from '@usp-ts/testkit';
import { googleNews } from '../src/index.js';

const NS = { news: 'http://www.google.com/schemas/sitemap-news/0.9' };
const entries = `
<entry><loc>https://example.com/1</loc><news:news><news:publication><news:name>Times</news:name><news:language>en</news:language></news:publication>
  <news:access>Subscription</news:access><news:genres>PressRelease, Blog</news:genres>
  <news:publication_date>2024-01-02T03:04:05+01:00</news:publication_date><news:title>One &amp; two</news:title>
  <news:keywords>a, b,, c</news:keywords><news:stock_tickers>NASDAQ:A</news:stock_tickers></news:news></entry>
<entry><loc>https://example.com/2</loc><news:news><news:title>No date</news:title></news:news></entry>
<entry><loc>https://example.com/3</loc><news:news><news:publication_date>2024-01-02</news:publication_date><news:title><![CDATA[Bąž]]></news:title></news:news></entry>
`;

describeFormatKit({
  name: '@usp-ts/ext-google-news',
  plugins: [extensionHost([googleNews()])],
  samples: [{ name: 'news entries', url: 'https://example.com/news.xml', input: wrapEntries(entries, NS) }],
});
