import type { WalkedDocument, WalkSummary } from '@usp-ts/core';
import type { Mutable } from './mutable.js';
import type { PageTracker } from './page-changes.js';
import { cutDocumentState, disappearedPageRows, removedPageRows } from './removed-pages.js';
import type { RemovedPageRow } from './rows.js';
import { iso, type SitePlan } from './site-plan.js';
import type { SitemapState, SiteState, UnreachableMark } from './state-store.js';

/**
 * The site's state for the next run, built document by document as the walk reports them: what
 * each document read in full leaves (validators, body hash, children, page digest), what a 304 or
 * a skip keeps, what a cut document merges, and the evidence about the site's `<lastmod>` values.
 */
export class NextState {
  readonly #plan: SitePlan;
  /** The documents of the next state, by the URL they were requested under. */
  readonly #next = new Map<string, SitemapState>();
  /** Last run's documents requested again this run and not read (they keep their last state). */
  readonly #failed = new Set<SitemapState>();
  #trust: number;

  constructor(plan: SitePlan) {
    this.#plan = plan;
    this.#trust = plan.prev?.lastmodTrust ?? 0;
  }

  /**
   * What the document leaves in the state. `before` is its state of the last run, `tracker` its
   * page writer, `crawlDelayMs` robots.txt's delay. Returns the rows of the pages it no longer
   * lists (a pages sitemap read to its end).
   */
  document(
    doc: WalkedDocument,
    before: SitemapState | null,
    tracker: PageTracker | null,
    crawlDelayMs: number | null,
  ): RemovedPageRow[] {
    const { node, response } = doc;
    const lm = iso(node.lastModified);
    if (node.type === 'InvalidSitemap') {
      if (response !== null && before !== null) this.#failed.add(before);
      return [];
    }
    if (doc.reused !== null && before !== null) {
      this.#next.set(doc.requestedUrl, this.#kept(doc, before, lm));
      return [];
    }
    // Only a document read to its end is worth its validators: a cut one is fetched in full next time.
    const bodySha256 = response?.bodyHash ?? null;
    if (
      response === null ||
      bodySha256 === null ||
      node.warnings.some((w) => w.code === 'truncated' || w.code === 'limit')
    ) {
      if (tracker !== null) {
        const cut = cutDocumentState({ requestedUrl: doc.requestedUrl, node, tracker, before });
        this.#next.set(doc.requestedUrl, cut);
      } else if (response !== null && before !== null) this.#failed.add(before);
      return [];
    }
    if (before !== null && before.bodySha256 !== null && before.indexLastmod !== null && lm !== null) {
      const lastmodMoved = lm !== before.indexLastmod;
      const bodyChanged = bodySha256 !== before.bodySha256;
      if (lastmodMoved !== bodyChanged) this.#trust = -1;
      else if (lastmodMoved && this.#trust >= 0) this.#trust++;
    }
    this.#next.set(doc.requestedUrl, {
      url: doc.requestedUrl,
      finalUrl: node.url,
      type: node.type as SitemapState['type'],
      etag: response.etag,
      lastModified: response.lastModified,
      indexLastmod: lm,
      bodySha256,
      children: doc.children.map((c) => ({ url: c.url, lastModified: iso(c.lastModified) })),
      pageCount: tracker?.count ?? 0,
      pages: tracker === null ? null : tracker.digest,
      news: tracker?.news ?? false,
      crawlDelayMs,
      fetchedAt: this.#plan.now,
    });
    return tracker === null ? [] : removedPageRows(this.#plan.site, tracker);
  }

  /** A document answered 304 or skipped: its last state, with this run's validators. */
  #kept(doc: WalkedDocument, before: SitemapState, lm: string | null): SitemapState {
    // A 304 while the index `<lastmod>` moved: the `<lastmod>` says nothing here.
    if (
      doc.reused === 'not-modified' &&
      before.indexLastmod !== null &&
      lm !== null &&
      lm !== before.indexLastmod
    ) {
      this.#trust = -1;
    }
    // Object.assign rather than a spread (see `walkOptions`); the same keys in the same order.
    const kept = Object.assign({}, before) as Mutable<SitemapState>;
    kept.etag = doc.response?.etag ?? before.etag;
    kept.lastModified = doc.response?.lastModified ?? before.lastModified;
    kept.indexLastmod = lm;
    // Not read in full: a 304 or a skip leaves the stored row as it was.
    kept.fetchedAt = before.fetchedAt;
    return kept;
  }

  /**
   * The site's next state after a walk that got an answer, and the rows of the pages of sitemaps
   * no longer listed (a walk that ended `ok`). Documents that failed this time, and (when the
   * walk was cut) those not reached, keep their last state; an ok walk forgets documents no
   * longer listed.
   */
  async walked(summary: WalkSummary): Promise<{ state: SiteState; removed: RemovedPageRow[] }> {
    const { prev, state, site, now, full, probeAll } = this.#plan;
    const ok = summary.outcome === 'ok';
    for (const rec of prev?.sitemaps ?? []) {
      if (this.#next.has(rec.url)) continue;
      if (!ok || this.#failed.has(rec)) this.#next.set(rec.url, rec);
    }
    let removed: RemovedPageRow[] = [];
    if (ok && prev !== null && state !== null) {
      const loadPages = (url: string) => state.loadPages(site, url);
      removed = await disappearedPageRows({ site, prev, next: this.#next, loadPages });
    }
    return {
      state: {
        site,
        walkedAt: now,
        fullWalkAt: full || prev === null ? now : prev.fullWalkAt,
        probedAt: probeAll || prev === null ? now : prev.probedAt,
        lastmodTrust: this.#trust,
        unreachable: null,
        sitemaps: [...this.#next.values()],
      },
      removed,
    };
  }

  /**
   * The state after a walk that got no answer: kept as it was, with the mark that makes the next
   * incremental run probe first. A site never reached keeps no documents; `probedAt` 0 has every
   * known path probed once it answers.
   */
  unreachable(reason: string | null): SiteState {
    const { prev, site, now } = this.#plan;
    const mark: UnreachableMark = {
      at: now,
      since: prev?.unreachable?.since ?? now,
      reason: reason ?? 'no answer',
    };
    if (prev !== null) return { ...prev, unreachable: mark };
    return {
      site,
      walkedAt: now,
      fullWalkAt: now,
      probedAt: 0,
      lastmodTrust: 0,
      unreachable: mark,
      sitemaps: [],
    };
  }
}

/** The state of a site whose probe got no answer (`SitePlan.probeFirst`): as it was, marked again. */
export function probeFailedState(prev: SiteState, now: number, failure: string): SiteState {
  const was = prev.unreachable as UnreachableMark;
  return { ...prev, unreachable: { ...was, at: now, reason: failure } };
}
