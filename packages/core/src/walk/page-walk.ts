import type { Page } from '../contract/model.js';
import type { PagesSitemapType, Sitemap } from '../contract/sitemap.js';
import type { WalkSummary } from '../contract/walk-summary.js';
import type { WalkStats } from './walk-stats.js';

/** The sitemap a streamed page came from. */
export interface WalkedSitemapInfo {
  /** Final URL of the document (after redirects). */
  readonly url: string;
  readonly type: PagesSitemapType;
}

/** One page of a streaming walk, with the sitemap it came from. */
export interface WalkedPage {
  readonly page: Page;
  readonly sitemap: WalkedSitemapInfo;
}

/** The iterable a streaming walk returns; the tree's shape is there once iteration is over. */
export interface PageWalk extends AsyncIterableIterator<WalkedPage> {
  readonly stats: WalkStats;
  /** How the walk ended (`ok`, `unreachable`, `partial`) once iteration is over; `null` before. */
  readonly summary: WalkSummary | null;
  /** The tree (pages counted, not kept unless a `pageStore` was given) once the walk ended. */
  readonly tree: Sitemap | null;
}
