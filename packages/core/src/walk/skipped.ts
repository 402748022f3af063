import { InvalidSitemap } from '../contract/sitemap.js';
import { type FetchResult, type FetchTask, hook } from './task.js';

/** Why a walk did not request a sitemap it was asked for (`SkippedSitemap.reason`). */
export type SkipReason =
  /** Requested already in this walk (the same URL key), listed again by another document. */
  | 'repeat'
  /** The walk had stopped taking sitemaps: a budget (`maxSitemaps`, `maxPages`, `deadlineMs`) or an abort. */
  | 'stopped'
  /** Its origin was given up earlier in the walk (`originBreaker`). */
  | 'unreachable'
  /** Nested deeper than `maxDepth`. */
  | 'too-deep'
  /** One of the index's own ancestors (a cycle). */
  | 'ancestor'
  /** Not an http(s) URL. */
  | 'not-http'
  /** Off the homepage's site (`hostPolicy: 'same-site'`). */
  | 'off-site'
  /** `recurseCallback` threw for it. */
  | 'callback';

/**
 * A sitemap the walk was asked for and did not request (`TreeOptions.onSkipped`): a child an
 * index listed, a known path, or a sitemap named in `sitemaps`. Its node in the tree is an
 * `InvalidSitemap` saying the same (a repeat's says which document listed it first).
 */
export interface SkippedSitemap {
  readonly url: string;
  /** The index or robots.txt that listed it; `null` at the top level. */
  readonly parentUrl: string | null;
  /** The level it would have had: robots.txt and known paths are 0. */
  readonly level: number;
  readonly reason: SkipReason;
  /** The reason its `InvalidSitemap` gives. */
  readonly message: string;
}

/** The walk's hook these report to (`WalkConfig.hooks`). */
type SkipHooks = { readonly onSkipped?: ((sitemap: SkippedSitemap) => void) | undefined };

/** Tells the caller's `onSkipped` about a sitemap the walk does not request. */
export function tellSkipped(hooks: SkipHooks, sitemap: SkippedSitemap): void {
  const onSkipped = hooks.onSkipped;
  if (onSkipped !== undefined) hook(() => onSkipped(sitemap));
}

/** `tellSkipped` for a task the walk did not request; returns `result`, its node. */
export function skippedTask(
  hooks: SkipHooks,
  task: FetchTask,
  reason: SkipReason,
  result: FetchResult,
): FetchResult {
  if (hooks.onSkipped === undefined) return result;
  const node = result.node;
  tellSkipped(hooks, {
    url: task.url,
    parentUrl: task.parentUrl ?? null,
    level: task.level,
    reason,
    message: node instanceof InvalidSitemap ? node.reason : '',
  });
  return result;
}
