import { type Page, pageToJSON } from '@usp-ts/core';
import { KIT_NS, runExtension as kitRun } from '@usp-ts/testkit';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { googleVideo, VIDEO_NAMESPACES, type Video } from '../src/index.js';

const V = 'http://www.google.com/schemas/sitemap-video/1.1';
const doc = (entries: string) => `<entries xmlns="${KIT_NS}" xmlns:video="${V}">${entries}</entries>`;
const entry = (video: string, loc = 'http://example.com/page') => `<entry><loc>${loc}</loc>${video}</entry>`;

const FULL = `<video:video>
  <video:thumbnail_loc> https://example.com/thumbs/123.jpg </video:thumbnail_loc>
  <video:title>Grilling steaks for summer</video:title>
  <video:description>Alkis shows you how to get perfectly done steaks every time</video:description>
  <video:content_loc>http://streamserver.example.com/video123.mp4</video:content_loc>
  <video:player_loc allow_embed="Yes" autoplay="ap=1">https://www.example.com/videoplayer.php?video=123</video:player_loc>
  <video:duration>600</video:duration>
  <video:expiration_date>2021-11-05T19:20:30+08:00</video:expiration_date>
  <video:rating>4.2</video:rating>
  <video:view_count>12345</video:view_count>
  <video:publication_date>2007-11-05T19:20:30+08:00</video:publication_date>
  <video:family_friendly>yes</video:family_friendly>
  <video:restriction relationship="allow">IE gb US CA</video:restriction>
  <video:platform relationship="deny">tv MOBILE</video:platform>
  <video:price currency="eur" type="rent" resolution="HD">1.99</video:price>
  <video:requires_subscription>no</video:requires_subscription>
  <video:uploader info="https://www.example.com/users/grillymcgrillerson">GrillyMcGrillerson</video:uploader>
  <video:live>NO</video:live>
  <video:tag>steak</video:tag>
  <video:tag>meat</video:tag>
  <video:tag> summer </video:tag>
</video:video>`;

const videosOf = (page: Page): readonly Video[] | undefined => page.extensions?.videos;

/** The kit's extension host (core's engine and router), with the warning codes in order. */
async function runExtension(...args: Parameters<typeof kitRun>) {
  const r = await kitRun(...args);
  return { ...r, codes: r.warnings.map((w) => w.code) };
}

describe('googleVideo()', () => {
  it('is plain data claiming the video namespace', () => {
    const ext = googleVideo();
    expect(ext.name).toBe('google-video');
    expect(ext.namespaces).toContain(V);
    expect(ext.namespaces).toEqual(VIDEO_NAMESPACES);
  });

  it('reads every field of Google’s example into page.extensions.videos', async () => {
    const r = await runExtension(googleVideo(), doc(entry(FULL)));
    expect(r.warnings).toEqual([]);
    const videos = videosOf(r.pages[0]);
    expect(videos).toHaveLength(1);
    const v = videos![0];
    expect({
      ...v,
      expirationDate: v.expirationDate?.toSourceString(),
      publicationDate: v.publicationDate?.toSourceString(),
    }).toEqual({
      thumbnailLoc: 'https://example.com/thumbs/123.jpg',
      title: 'Grilling steaks for summer',
      description: 'Alkis shows you how to get perfectly done steaks every time',
      contentLoc: 'http://streamserver.example.com/video123.mp4',
      playerLoc: 'https://www.example.com/videoplayer.php?video=123',
      playerAllowEmbed: true,
      playerAutoplay: 'ap=1',
      durationSeconds: 600,
      expirationDate: '2021-11-05T19:20:30+08:00',
      rating: 4.2,
      viewCount: 12345,
      publicationDate: '2007-11-05T19:20:30+08:00',
      familyFriendly: true,
      restriction: { relationship: 'allow', countries: ['IE', 'GB', 'US', 'CA'] },
      platform: { relationship: 'deny', platforms: ['tv', 'mobile'] },
      requiresSubscription: false,
      uploader: { name: 'GrillyMcGrillerson', info: 'https://www.example.com/users/grillymcgrillerson' },
      live: false,
      tags: ['steak', 'meat', 'summer'],
      prices: [{ amount: 1.99, currency: 'EUR', type: 'rent', resolution: 'hd' }],
    });
  });

  it('keeps several videos per page in document order, and pages without videos have no extensions', async () => {
    const video = (n: number) =>
      `<video:video><video:thumbnail_loc>http://example.com/${n}.jpg</video:thumbnail_loc><video:title>V${n}</video:title><video:description>D</video:description><video:content_loc>http://example.com/${n}.mp4</video:content_loc></video:video>`;
    const r = await runExtension(
      googleVideo(),
      doc(entry(video(1) + video(2), 'http://example.com/a') + entry('', 'http://example.com/b')),
    );
    expect(videosOf(r.pages[0])?.map((v) => v.title)).toEqual(['V1', 'V2']);
    expect(r.pages[1].extensions).toBeUndefined();
    expect(r.warnings).toEqual([]);
  });

  it('turns invalid values into null with a warning each, and keeps the video', async () => {
    const r = await runExtension(
      googleVideo(),
      doc(
        entry(`<video:video>
          <video:thumbnail_loc>/relative.jpg</video:thumbnail_loc>
          <video:title>T</video:title>
          <video:description>D</video:description>
          <video:player_loc allow_embed="maybe">javascript:play()</video:player_loc>
          <video:duration>ten minutes</video:duration>
          <video:expiration_date>soon</video:expiration_date>
          <video:rating>5.5</video:rating>
          <video:view_count>-3</video:view_count>
          <video:family_friendly>sometimes</video:family_friendly>
          <video:restriction>US</video:restriction>
          <video:platform relationship="allow">web car</video:platform>
          <video:price currency="euros">1.99</video:price>
          <video:uploader></video:uploader>
        </video:video>`),
      ),
    );
    const v = videosOf(r.pages[0])![0];
    expect(v).toMatchObject({
      thumbnailLoc: null,
      title: 'T',
      playerLoc: null,
      playerAllowEmbed: null,
      durationSeconds: null,
      expirationDate: null,
      rating: null,
      viewCount: null,
      familyFriendly: null,
      restriction: null,
      platform: { relationship: 'allow', platforms: ['web'] },
      prices: [],
      uploader: null,
    });
    expect(r.codes).toEqual([
      'invalid-value', // thumbnail_loc
      'invalid-value', // allow_embed
      'invalid-value', // player_loc
      'invalid-value', // duration
      'invalid-date', // expiration_date
      'invalid-value', // rating
      'invalid-value', // view_count
      'invalid-value', // family_friendly
      'invalid-value', // restriction relationship
      'invalid-value', // platform "car"
      'invalid-value', // price
      'invalid-value', // uploader
      'missing-field', // no thumbnail, no content_loc or player_loc
    ]);
  });

  it('keeps a duration over Google’s 8 hours and more than 32 tags, with an over-spec warning', async () => {
    const tags = Array.from({ length: 33 }, (_, i) => `<video:tag>t${i}</video:tag>`).join('');
    const r = await runExtension(
      googleVideo(),
      doc(
        entry(
          `<video:video><video:thumbnail_loc>http://example.com/t.jpg</video:thumbnail_loc><video:title>T</video:title><video:description>D</video:description><video:content_loc>http://example.com/v.mp4</video:content_loc><video:duration>36000</video:duration>${tags}</video:video>`,
        ),
      ),
    );
    const v = videosOf(r.pages[0])![0];
    expect(v.durationSeconds).toBe(36000);
    expect(v.tags).toHaveLength(33);
    expect(r.codes).toEqual(['over-spec', 'over-spec']);
  });

  it('ignores video fields outside <video:video> with a warning, and elements of other namespaces inside it', async () => {
    const r = await runExtension(
      googleVideo(),
      `<entries xmlns="${KIT_NS}" xmlns:video="${V}" xmlns:x="urn:x"><entry><loc>http://example.com/p</loc><video:title>Stray</video:title><video:video><x:title>Not ours</x:title><video:title>T</video:title><video:description>D</video:description><video:thumbnail_loc>http://example.com/t.jpg</video:thumbnail_loc><video:player_loc>http://example.com/p</video:player_loc></video:video></entry></entries>`,
    );
    expect(videosOf(r.pages[0])?.map((v) => v.title)).toEqual(['T']);
    expect(r.codes).toEqual(['unknown-element']);
  });

  it('keeps the entries completed before a cut, never a half-read video', async () => {
    const whole = doc(entry(FULL, 'http://example.com/1') + entry(FULL, 'http://example.com/2'));
    const cut = whole.slice(0, whole.lastIndexOf('<video:tag>'));
    const r = await runExtension(googleVideo(), cut);
    expect(r.pages.map((p) => p.url)).toEqual(['http://example.com/1']);
    expect(videosOf(r.pages[0])?.[0].tags).toEqual(['steak', 'meat', 'summer']);
  });

  it('serialises to plain JSON with ISO dates', async () => {
    const r = await runExtension(googleVideo(), doc(entry(FULL)));
    const json = pageToJSON(r.pages[0]);
    const v = (json.extensions!.videos as unknown as Record<string, unknown>[])[0];
    expect(v.publicationDate).toBe('2007-11-05T19:20:30+08:00');
    expect(v.tags).toEqual(['steak', 'meat', 'summer']);
  });

  it('types page.extensions.videos through the module augmentation of PageExtensions', () => {
    expectTypeOf<NonNullable<Page['extensions']>['videos']>().toEqualTypeOf<readonly Video[] | undefined>();
  });
});
