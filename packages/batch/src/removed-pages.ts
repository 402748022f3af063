import type { Sitemap } from '@usp-ts/core';
import type { PageTracker } from './page-changes.js';
import {
  digestEntries,
  digestUrlsAt,
  ENTRY_BYTES,
  readDigest,
  urlHashesOf,
  writeDigest,
} from './page-digest.js';
import type { RemovedPageRow } from './rows.js';
import type { SitemapState, SiteState } from './state-store.js';

// Pages gone since the last run (`change: 'removed'`), said only where the evidence is whole:
// - a pages sitemap read to its end no longer lists a page it listed last run;
// - a sitemap that robots.txt or an index read to its end no longer lists (and everything that
//   sitemap listed, down its tree): all its pages;
// - a sitemap cut short (truncated, a budget, the deadline) removes nothing: its state keeps the
//   pages of the last run beside those read this time, so the pages it did not reach are neither
//   reported removed now nor `new` when it is read in full again.

function removedRow(site: string, sitemap: string, url: string): RemovedPageRow {
  return { site, sitemap, url, change: 'removed' };
}

/** The pages the tracker's document (read to its end) listed last run and lists no more. */
export function removedPageRows(site: string, tracker: PageTracker): RemovedPageRow[] {
  const previous = tracker.previousPages;
  if (previous === null) return [];
  const now = urlHashesOf(digestEntries(tracker.digest));
  const gone = digestUrlsAt(previous, (entries) => {
    const at: number[] = [];
    for (let i = 0; i + ENTRY_BYTES <= entries.length; i += ENTRY_BYTES) {
      if (!now.has(entries.toString('latin1', i, i + 8))) at.push(i / ENTRY_BYTES);
    }
    return at;
  });
  return (gone.urls ?? []).map((url) => removedRow(site, tracker.sitemap, url));
}

/**
 * The state of a pages sitemap cut short: no validators and no body hash (read in full next time),
 * and the pages read this time with those of the last run it did not reach.
 */
export function cutDocumentState(o: {
  readonly requestedUrl: string;
  readonly node: Sitemap;
  readonly tracker: PageTracker;
  readonly before: SitemapState | null;
}): SitemapState {
  const current = readDigest(o.tracker.digest);
  let entries: Uint8Array = current.entries;
  let urls = current.urls ?? [];
  const previous = o.tracker.previousPages;
  const before = previous === null ? null : readDigest(previous);
  if (before !== null && before.urls !== null) {
    const seen = urlHashesOf(current.entries);
    const keep: number[] = [];
    for (let i = 0; i < before.urls.length; i++) {
      if (!seen.has(before.entries.toString('latin1', i * 16, i * 16 + 8))) keep.push(i);
    }
    if (keep.length > 0) {
      const merged = Buffer.allocUnsafe(current.entries.length + keep.length * 16);
      merged.set(current.entries, 0);
      for (let k = 0; k < keep.length; k++) {
        before.entries.copy(merged, current.entries.length + k * 16, keep[k] * 16, keep[k] * 16 + 16);
      }
      entries = merged;
      urls = [...urls, ...keep.map((i) => (before.urls as readonly string[])[i])];
    }
  }
  return {
    url: o.requestedUrl,
    finalUrl: o.node.url,
    type: o.node.type as SitemapState['type'],
    etag: null,
    lastModified: null,
    indexLastmod: null,
    bodySha256: null,
    children: [],
    pageCount: urls.length,
    pages: writeDigest(entries, urls),
    news: o.tracker.news || (o.before?.news ?? false),
    crawlDelayMs: null,
    fetchedAt: o.before?.fetchedAt ?? 0,
  };
}

/**
 * The pages of last run's sitemaps that the parent that listed them, read to its end this run, no
 * longer lists (and of everything below them). `next` is the site's new state as it will be saved
 * (documents read this time, and those kept from the last run); call it for a walk that ended `ok`.
 */
export async function disappearedPageRows(o: {
  readonly site: string;
  readonly prev: SiteState;
  readonly next: ReadonlyMap<string, SitemapState>;
  readonly loadPages: (url: string) => Promise<Uint8Array | null>;
}): Promise<RemovedPageRow[]> {
  const parentOf = new Map<string, string>();
  for (const s of o.prev.sitemaps) for (const c of s.children) parentOf.set(c.url, s.url);
  const gone = new Map<string, boolean>();
  const isGone = (url: string, depth: number): boolean => {
    const known = gone.get(url);
    if (known !== undefined) return known;
    const parent = parentOf.get(url);
    let result = false;
    if (parent !== undefined && depth < 64) {
      const read = o.next.get(parent);
      result = read !== undefined ? !read.children.some((c) => c.url === url) : isGone(parent, depth + 1);
    }
    gone.set(url, result);
    return result;
  };
  const rows: RemovedPageRow[] = [];
  for (const s of o.prev.sitemaps) {
    if (o.next.has(s.url) || s.pageCount === 0 || !isGone(s.url, 0)) continue;
    const digest = s.pages !== undefined ? s.pages : await o.loadPages(s.url);
    const urls = digest === null ? null : readDigest(digest).urls;
    for (const url of urls ?? []) rows.push(removedRow(o.site, s.finalUrl, url));
  }
  return rows;
}
