import type { ChildRef } from '../contract/model.js';
import type { WarningCode } from '../contract/warning.js';
import { isHttpUrl } from '../engine/url.js';
import { type Ancestry, safeKey, setRepr } from './ancestry.js';
import type { SkipReason } from './skipped.js';

/** Why usp does not fetch a child of an index, in its words, with the warning code. */
export interface ChildRefusal {
  readonly reason: string;
  readonly code: WarningCode;
  readonly skip: SkipReason;
}

/** What an index's children descend from: its ancestors, its requested URL and its final URL. */
export function childAncestry(parent: Ancestry, requestedUrl: string, indexUrl: string): Ancestry {
  const keys = new Set(parent.keys);
  keys.add(safeKey(requestedUrl));
  keys.add(safeKey(indexUrl));
  const urls = new Set(parent.urls);
  urls.add(indexUrl);
  return { keys, urls };
}

/**
 * The children `recurseListCallback` kept, in its order; a URL it made up is a child without a
 * `<lastmod>`.
 */
export function keptChildren(refs: readonly ChildRef[], kept: readonly string[]): ChildRef[] {
  const byUrl = new Map<string, ChildRef>();
  for (const r of refs) if (!byUrl.has(r.url)) byUrl.set(r.url, r);
  return kept.map((u) => byUrl.get(u) ?? { url: u, lastModified: null });
}

/**
 * usp's checks on a child at `level` (its index's level + 1): too deep, not http(s), or one of
 * its own ancestors. `null` when it may be fetched.
 */
export function childRefusal(
  url: string,
  level: number,
  maxDepth: number,
  ancestry: Ancestry,
): ChildRefusal | null {
  if (level > maxDepth) {
    return {
      reason: `Recursion level exceeded ${maxDepth} for URL ${url}.`,
      code: 'recursion',
      skip: 'too-deep',
    };
  }
  if (!isHttpUrl(url)) {
    return { reason: `URL ${url} is not a HTTP(s) URL.`, code: 'invalid-url', skip: 'not-http' };
  }
  if (ancestry.keys.has(safeKey(url))) {
    const reason = `Recursion detected in URL ${url} with parent URLs ${setRepr(ancestry.urls)}.`;
    return { reason, code: 'recursion', skip: 'ancestor' };
  }
  return null;
}
