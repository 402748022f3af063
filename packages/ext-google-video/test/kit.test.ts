import { describeFormatKit, extensionHost, wrapEntries } from '@usp-ts/testkit';
import { googleVideo } from '../src/index.js';

const NS = { video: 'http://www.google.com/schemas/sitemap-video/1.1' };
const entries = `
<entry><loc>https://example.com/1</loc><video:video>
  <video:thumbnail_loc>https://example.com/t.jpg</video:thumbnail_loc><video:title>Steaks</video:title>
  <video:description>How to grill</video:description><video:content_loc>https://example.com/v.mp4</video:content_loc>
  <video:player_loc allow_embed="yes" autoplay="ap=1">https://example.com/player?v=1</video:player_loc>
  <video:duration>600</video:duration><video:expiration_date>2030-11-05T19:20:30+08:00</video:expiration_date>
  <video:rating>4.2</video:rating><video:view_count>12345</video:view_count>
  <video:publication_date>2024-11-05T19:20:30+08:00</video:publication_date><video:family_friendly>yes</video:family_friendly>
  <video:restriction relationship="allow">IE GB US</video:restriction><video:platform relationship="deny">tv</video:platform>
  <video:price currency="EUR" type="rent">1.99</video:price><video:requires_subscription>no</video:requires_subscription>
  <video:uploader info="https://example.com/u">Grilly</video:uploader><video:live>no</video:live>
  <video:tag>steak</video:tag><video:tag>summer</video:tag></video:video>
  <video:video><video:title>Second</video:title><video:duration>forever</video:duration></video:video></entry>
<entry><loc>https://example.com/2</loc></entry>
`;

describeFormatKit({
  name: '@usp-ts/ext-google-video',
  plugins: [extensionHost([googleVideo()])],
  samples: [
    { name: 'video entries', url: 'https://example.com/videos.xml', input: wrapEntries(entries, NS) },
  ],
});
