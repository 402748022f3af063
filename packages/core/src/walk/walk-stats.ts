import type { StopReason } from '../contract/walk-summary.js';

/** Counters of a walk, handed to `onProgress` as it goes. */
export interface WalkStats {
  /** Sitemaps waiting for a fetch slot. */
  readonly sitemapsQueued: number;
  /** Sitemaps being fetched and parsed now. */
  readonly sitemapsInFlight: number;
  /** Requests started (counts against `maxSitemaps`). */
  readonly sitemapsFetched: number;
  /** Sitemap nodes finished, of any type. */
  readonly sitemapsDone: number;
  /** Nodes that ended as `InvalidSitemap`. */
  readonly sitemapsInvalid: number;
  /** Pages accepted (counts against `maxPages`). */
  readonly pages: number;
  /** Decoded bytes parsed. */
  readonly bytes: number;
  /** Set once the walk stopped early; `null` while it runs and when it finished everything. */
  readonly stoppedBy: StopReason | null;
}
