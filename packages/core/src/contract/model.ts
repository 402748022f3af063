import type { SitemapDate } from './sitemap-date.js';

/** sitemaps.org `<changefreq>` values. */
export const CHANGE_FREQUENCIES = [
  'always',
  'hourly',
  'daily',
  'weekly',
  'monthly',
  'yearly',
  'never',
] as const;
export type ChangeFrequency = (typeof CHANGE_FREQUENCIES)[number];

/** Priority a page gets when the sitemap gives none or an invalid one (as usp). */
export const DEFAULT_PRIORITY = 0.5;

/** Google News `<news:news>` data. A story exists only with a title and a valid publication date. */
export interface NewsStory {
  readonly title: string;
  readonly publishDate: SitemapDate | null;
  readonly publicationName: string | null;
  readonly publicationLanguage: string | null;
  readonly access: string | null;
  readonly genres: readonly string[];
  readonly keywords: readonly string[];
  readonly stockTickers: readonly string[];
}

/** Google Image `<image:image>` data. */
export interface SitemapImage {
  readonly loc: string | null;
  readonly caption: string | null;
  readonly geoLocation: string | null;
  readonly title: string | null;
  readonly license: string | null;
}

/** An hreflang alternate (`<xhtml:link rel="alternate" hreflang href>`). */
export interface Alternate {
  readonly hreflang: string;
  readonly href: string;
}

/**
 * The typed place for third-party extension data. An extension package augments it:
 *
 * ```ts
 * declare module '@usp-ts/core' {
 *   interface PageExtensions { videos?: readonly Video[] }
 * }
 * ```
 */
// biome-ignore lint/suspicious/noEmptyInterface: augmented by extension packages through declaration merging
export interface PageExtensions {}

/** One page of a sitemap. Plain data: cheap to create, structured-clone and JSON friendly. */
export interface Page {
  readonly url: string;
  /** `<priority>` in [0, 1]; 0.5 when absent or invalid. */
  readonly priority: number;
  readonly lastModified: SitemapDate | null;
  readonly changeFrequency: ChangeFrequency | null;
  readonly newsStory: NewsStory | null;
  /** `null` when the page has no images (never `[]`). */
  readonly images: readonly SitemapImage[] | null;
  /** `null` when the page has no alternates (never `[]`). */
  readonly alternates: readonly Alternate[] | null;
  /** Data contributed by extensions, keyed by what each extension declares; absent when none. */
  readonly extensions?: PageExtensions;
}

/** A page while its entry is being read; formats and extensions fill it in. */
export type PageDraft = { -readonly [K in keyof Page]: Page[K] };

export function newPageDraft(url = ''): PageDraft {
  return {
    url,
    priority: DEFAULT_PRIORITY,
    lastModified: null,
    changeFrequency: null,
    newsStory: null,
    images: null,
    alternates: null,
  };
}

/** A child sitemap named by an index (robots.txt `Sitemap:` line or `<sitemap>` entry). */
export interface ChildRef {
  readonly url: string;
  /** The index entry's `<lastmod>`, when it gave one. */
  readonly lastModified: SitemapDate | null;
}

/**
 * robots.txt rules beyond the Sitemap lines; implemented by the robots format,
 * declared here so the tree can carry them without core knowing the format.
 */
export interface RobotsRules {
  /** RFC 9309 matching: longest match wins, `*` and `$`, allow wins ties. */
  isAllowed(url: string, userAgent: string): boolean;
  /** Crawl-delay in seconds for the group that matches the user agent, if any. */
  crawlDelay(userAgent: string): number | null;
  readonly groups: readonly RobotsGroup[];
}

export interface RobotsGroup {
  readonly userAgents: readonly string[];
  readonly rules: readonly { readonly allow: boolean; readonly path: string }[];
  readonly crawlDelay: number | null;
}
