import { KIT_NS, runExtension as kitRun } from '@usp-ts/testkit';
import { describe, expect, it } from 'vitest';
import { googleImage, IMAGE_NAMESPACES } from '../src/index.js';

const I = 'http://www.google.com/schemas/sitemap-image/1.1';
const doc = (entries: string) => `<entries xmlns="${KIT_NS}" xmlns:image="${I}">${entries}</entries>`;
const entry = (images: string, loc = 'http://example.com/page') =>
  `<entry><loc>${loc}</loc>${images}</entry>`;

/** The kit's extension host (core's engine and router), with the warning codes in order. */
async function runExtension(...args: Parameters<typeof kitRun>) {
  const r = await kitRun(...args);
  return { ...r, codes: r.warnings.map((w) => w.code) };
}

describe('googleImage()', () => {
  it('is plain data claiming the image namespace', () => {
    const ext = googleImage();
    expect(ext.name).toBe('google-image');
    expect(ext.namespaces).toEqual(IMAGE_NAMESPACES);
    expect(ext.namespaces).toContain(I);
  });

  it('reads any number of images per page, every field, in document order', async () => {
    const r = await runExtension(
      googleImage(),
      doc(
        entry(`<image:image>
            <image:loc>
              http://example.com/1.jpg
            </image:loc>
            <image:caption>  Cap &amp; tion  </image:caption>
            <image:geo_location>Limerick, Ireland</image:geo_location>
            <image:title>One</image:title>
            <image:license>http://example.com/license</image:license>
          </image:image>
          <image:image><image:loc>http://example.com/2.jpg</image:loc></image:image>`) +
          entry('', 'http://example.com/none'),
      ),
    );
    expect(r.pages[0].images).toEqual([
      {
        loc: 'http://example.com/1.jpg',
        caption: 'Cap & tion',
        geoLocation: 'Limerick, Ireland',
        title: 'One',
        license: 'http://example.com/license',
      },
      { loc: 'http://example.com/2.jpg', caption: null, geoLocation: null, title: null, license: null },
    ]);
    expect(r.pages[1].images).toBeNull();
    expect(r.warnings).toEqual([]);
  });

  it('keeps an image without <image:loc> (loc null) with a warning, as usp keeps it', async () => {
    const r = await runExtension(
      googleImage(),
      doc(entry('<image:image><image:title>No loc</image:title></image:image>')),
    );
    expect(r.pages[0].images).toEqual([
      { loc: null, caption: null, geoLocation: null, title: 'No loc', license: null },
    ]);
    expect(r.codes).toEqual(['missing-field']);
  });

  it('ignores image fields outside <image:image> with a warning (usp aborts the document)', async () => {
    const r = await runExtension(
      googleImage(),
      doc(
        entry('<image:loc>http://example.com/stray.jpg</image:loc>') +
          entry(
            '<image:image><image:loc>http://example.com/ok.jpg</image:loc></image:image>',
            'http://example.com/2',
          ),
      ),
    );
    expect(r.pages[0].images).toBeNull();
    expect(r.pages[1].images?.map((i) => i.loc)).toEqual(['http://example.com/ok.jpg']);
    expect(r.codes).toEqual(['unknown-element']);
  });

  it('ignores a nested <image:image> and elements of other namespaces', async () => {
    const r = await runExtension(
      googleImage(),
      `<entries xmlns="${KIT_NS}" xmlns:image="${I}" xmlns:x="urn:x"><entry><loc>http://example.com/p</loc><image:image><x:loc>http://example.com/x.jpg</x:loc><image:loc>http://example.com/1.jpg</image:loc><image:image><image:title>inner</image:title></image:image></image:image></entry></entries>`,
    );
    expect(r.pages[0].images).toEqual([
      { loc: 'http://example.com/1.jpg', caption: null, geoLocation: null, title: 'inner', license: null },
    ]);
  });

  it('drops an image whose <image:loc> cannot be fetched, as pages are dropped, and keeps the rest', async () => {
    // Issue 14 item 9: the host holds `<`/`>` (the WHATWG parser refuses it), or the text holds
    // U+FFFD where the document had bytes invalid in its encoding.
    const image = (loc: string) =>
      `<image:image><image:loc>${loc}</image:loc><image:title>t</image:title></image:image>`;
    const r = await runExtension(
      googleImage(),
      doc(
        entry(
          image('http://example.com&amp;&gt;&lt;x/a.jpg') +
            image('http://example.com/\uFFFD.jpg') +
            image('/relative.jpg') +
            image('http://example.com/ok.jpg'),
        ),
      ),
    );
    expect(r.pages.map((p) => p.url)).toEqual(['http://example.com/page']);
    expect(r.pages[0].images?.map((i) => i.loc)).toEqual(['http://example.com/ok.jpg']);
    expect(r.warnings.map((w) => [w.code, w.message])).toEqual([
      ['invalid-url', 'Image URL has no valid host, skipped: http://example.com&><x/a.jpg'],
      [
        'encoding',
        "Image URL holds bytes that are not valid in the document's encoding (read as U+FFFD), skipped: http://example.com/\uFFFD.jpg",
      ],
      ['invalid-url', 'Image URL has no valid host, skipped: /relative.jpg'],
    ]);
  });
});
