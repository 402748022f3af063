// Types only (erased from the build), and the module the augmentation below names must be loaded.
import type { SitemapDate } from '@usp-ts/core';

/** `allow` lists the only places where the video may play; `deny` the places where it may not. */
export type VideoRelationship = 'allow' | 'deny';
export type VideoPlatformName = 'web' | 'mobile' | 'tv';

/** `<video:restriction relationship="allow|deny">IE GB US</video:restriction>` */
export interface VideoRestriction {
  readonly relationship: VideoRelationship;
  /** ISO 3166-1 alpha-2 codes, upper-cased. */
  readonly countries: readonly string[];
}

/** `<video:platform relationship="allow|deny">web mobile tv</video:platform>` */
export interface VideoPlatforms {
  readonly relationship: VideoRelationship;
  readonly platforms: readonly VideoPlatformName[];
}

/** `<video:uploader info="URL">name</video:uploader>` */
export interface VideoUploader {
  readonly name: string;
  /** The uploader's page (`info` attribute), `null` when absent. */
  readonly info: string | null;
}

/** `<video:price currency="EUR" type="rent|own" resolution="hd|sd">1.99</video:price>` */
export interface VideoPrice {
  readonly amount: number;
  /** ISO 4217 code, upper-cased. */
  readonly currency: string;
  readonly type: 'rent' | 'own' | null;
  readonly resolution: 'hd' | 'sd' | null;
}

/**
 * One `<video:video>` of a page. A value that is absent or invalid is `null` (invalid values
 * are also reported as a warning); list fields are `[]` when absent.
 */
export interface Video {
  readonly thumbnailLoc: string | null;
  readonly title: string | null;
  readonly description: string | null;
  readonly contentLoc: string | null;
  readonly playerLoc: string | null;
  /** `<video:player_loc allow_embed="yes|no">`. */
  readonly playerAllowEmbed: boolean | null;
  /** `<video:player_loc autoplay="...">`: the query string the player needs to autoplay. */
  readonly playerAutoplay: string | null;
  /** `<video:duration>`: whole seconds. */
  readonly durationSeconds: number | null;
  readonly expirationDate: SitemapDate | null;
  /** `<video:rating>`: 0.0 to 5.0. */
  readonly rating: number | null;
  readonly viewCount: number | null;
  readonly publicationDate: SitemapDate | null;
  readonly familyFriendly: boolean | null;
  readonly restriction: VideoRestriction | null;
  readonly platform: VideoPlatforms | null;
  readonly requiresSubscription: boolean | null;
  readonly uploader: VideoUploader | null;
  readonly live: boolean | null;
  /** `<video:tag>`, in document order. */
  readonly tags: readonly string[];
  readonly prices: readonly VideoPrice[];
}

// The typed slot: after `import '@usp-ts/ext-google-video'`, `page.extensions?.videos` is known
// to TypeScript everywhere a Page is used. Nothing happens at run time.
declare module '@usp-ts/core' {
  interface PageExtensions {
    /** Google Video `<video:video>` entries of the page, in document order. */
    videos?: readonly Video[];
  }
}
