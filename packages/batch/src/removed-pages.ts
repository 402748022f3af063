import type { Sitemap } from '@usp-ts/core';
import type { PageTracker } from './page-changes.js';
import { digestOf, digestParts, digestUrlsAt, ENTRY_BYTES, readDigest, urlSection } from './page-digest.js';
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
  const gone = tracker.gonePages();
  if (gone.length === 0) return [];
  return (digestUrlsAt(previous, gone) ?? []).map((url) => removedRow(site, tracker.sitemap, url));
}

/**
 * The digest of a document cut short: the pages read this time, then those of the last digest it
 * did not reach (so they are neither removed now nor new when it is read in full again), in the
 * last digest's hashes: layout 4 (after a digest of layout 3 or 4), or layout 2 when the last
 * digest is of layout 1 or 2 (the unread pages' row hashes are SHA-1s; read in full, the document
 * is saved in layout 4). Without a last digest that names its URLs, the pages read.
 */
function cutDigest(tracker: PageTracker): { digest: Uint8Array; count: number } {
  const current = digestParts(tracker.digest);
  const { version, entries } = tracker.readEntries;
  // The tracker's URLs are front-coded (layout 4); layout 2 keeps them whole.
  const read = version === 4 ? current.urls : urlSection(2, readDigest(tracker.digest).urls ?? []);
  const previous = tracker.previousPages;
  const gone = tracker.gonePages();
  const goneUrls = previous === null || gone.length === 0 ? null : digestUrlsAt(previous, gone);
  if (previous === null || goneUrls === null) {
    return { digest: digestOf(version, entries, read, current.count), count: current.count };
  }
  const before = digestParts(previous).entries;
  const kept = Buffer.allocUnsafe(gone.length * ENTRY_BYTES);
  for (let k = 0; k < gone.length; k++) {
    const i = gone[k] as number;
    before.copy(kept, k * ENTRY_BYTES, i * ENTRY_BYTES, (i + 1) * ENTRY_BYTES);
  }
  // Layout 4's kept URLs start front-coded afresh (the first shares nothing): a section may be
  // joined to another so.
  const keptUrls = urlSection(version, goneUrls);
  const urls = current.count === 0 ? keptUrls : Buffer.concat([read, Buffer.from('\n'), keptUrls]);
  const count = current.count + gone.length;
  return { digest: digestOf(version, Buffer.concat([entries, kept]), urls, count), count };
}

/**
 * The state of a pages sitemap cut short: no validators and no body hash (read in full next time),
 * and the pages read this time with those of the last run it did not reach (`cutDigest`).
 */
export function cutDocumentState(o: {
  readonly requestedUrl: string;
  readonly node: Sitemap;
  readonly tracker: PageTracker;
  readonly before: SitemapState | null;
}): SitemapState {
  const { digest, count } = cutDigest(o.tracker);
  return {
    url: o.requestedUrl,
    finalUrl: o.node.url,
    type: o.node.type as SitemapState['type'],
    etag: null,
    lastModified: null,
    indexLastmod: null,
    bodySha256: null,
    children: [],
    pageCount: count,
    pages: digest,
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
