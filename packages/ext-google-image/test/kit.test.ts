import { describeFormatKit, extensionHost, wrapEntries } from '@usp-ts/testkit';
import { googleImage } from '../src/index.js';

const NS = { image: 'http://www.google.com/schemas/sitemap-image/1.1' };
const entries = `
<entry><loc>https://example.com/1</loc>
  <image:image><image:loc> https://example.com/1.jpg </image:loc><image:caption>Cap &amp; tion</image:caption><image:geo_location>Limerick</image:geo_location><image:title>T</image:title><image:license>https://example.com/l</image:license></image:image>
  <image:image><image:loc>https://example.com/2.jpg</image:loc></image:image></entry>
<entry><loc>https://example.com/2</loc><image:image><image:title>No loc</image:title></image:image></entry>
<entry><loc>https://example.com/3</loc></entry>
`;

describeFormatKit({
  name: '@usp-ts/ext-google-image',
  plugins: [extensionHost([googleImage()])],
  samples: [
    { name: 'image entries', url: 'https://example.com/images.xml', input: wrapEntries(entries, NS) },
  ],
});
