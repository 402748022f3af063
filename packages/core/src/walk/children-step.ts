import { errorText } from '../contract/errors.js';
import type { ChildRef } from '../contract/model.js';
import type { AbstractIndexSitemap, Sitemap } from '../contract/sitemap.js';
import type { WarningCode } from '../contract/warning.js';
import { childAncestry, childRefusal, keptChildren } from './recursion.js';
import { type SkipReason, tellSkipped } from './skipped.js';
import type { FetchResult, FetchTask } from './task.js';
import { TreePlace } from './tree-order.js';
import type { WalkState } from './walk-state.js';

/** An index the walk read, and the children it listed. */
export interface IndexRead {
  readonly task: FetchTask;
  readonly index: AbstractIndexSitemap;
  /** The URL requested for the index (its node has the final one). */
  readonly requestedUrl: string;
  readonly refs: ChildRef[];
}

/**
 * The walk's children step, usp's index recursion: the list filter, then per child the filter,
 * depth, cycle and host checks, then the fetch. The children's nodes go into the index's
 * `subSitemaps` in the index's order, whatever order their fetches complete in.
 */
export async function fetchChildren(
  walk: WalkState,
  { task, index, requestedUrl, refs }: IndexRead,
): Promise<void> {
  const { recurseCallback, recurseListCallback } = walk.config.hooks;
  const ancestry = childAncestry(task.ancestry, requestedUrl, index.url);
  const urls = ancestry.urls;
  let wanted: ChildRef[] = refs;
  if (recurseListCallback !== undefined) {
    let kept: string[];
    try {
      kept = recurseListCallback(
        refs.map((r) => r.url),
        task.level,
        urls,
        refs.map((r) => r.lastModified),
      );
    } catch (error) {
      walk.fail(error);
      return;
    }
    wanted = keptChildren(refs, kept);
  }
  const level = task.level + 1;
  const ordered = task.place !== undefined;
  const places: (TreePlace | undefined)[] = [];
  /** A child not requested: its node, and the caller's `onSkipped` told. */
  const refused = (ref: ChildRef, skip: SkipReason, reason: string, code: WarningCode): Sitemap => {
    tellSkipped(walk.config.hooks, {
      url: ref.url,
      parentUrl: index.url,
      level,
      reason: skip,
      message: reason,
    });
    return walk.invalidNode(ref.url, reason, ref.lastModified, code);
  };
  const slots: (Promise<FetchResult> | Sitemap | null)[] = wanted.map((ref, i) => {
    const prefix = `Unable to add sub-sitemap from URL ${ref.url}: `;
    if (recurseCallback !== undefined) {
      try {
        if (!recurseCallback(ref.url, task.level, urls, ref.lastModified)) return null;
      } catch (error) {
        return refused(ref, 'callback', prefix + errorText(error), 'fetch');
      }
    }
    const refusal = childRefusal(ref.url, level, walk.config.maxDepth, ancestry);
    if (refusal !== null) return refused(ref, refusal.skip, prefix + refusal.reason, refusal.code);
    const offSite = walk.offSite(ref.url);
    if (offSite !== null) return refused(ref, 'off-site', `${prefix}${offSite}`, 'blocked');
    const place = ordered ? new TreePlace() : undefined;
    places[i] = place;
    return walk.fetch({
      url: ref.url,
      level,
      ancestry,
      lastModified: ref.lastModified,
      parentUrl: index.url,
      ...(place !== undefined ? { place } : {}),
    });
  });
  // The children's places, in the order of the `subSitemaps` the loop below fills.
  if (ordered) {
    task.place?.listed(
      slots.flatMap((slot, i) =>
        slot === null ? [] : slot instanceof Promise ? [places[i] as TreePlace] : [TreePlace.of(slot)],
      ),
    );
  }
  // Completion order is whatever the network gives; the tree keeps the index's order.
  for (const slot of slots) {
    if (slot === null) continue;
    index.subSitemaps.push(slot instanceof Promise ? (await slot).node : slot);
  }
}
