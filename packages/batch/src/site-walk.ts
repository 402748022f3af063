import { createHash } from 'node:crypto';
import {
  type BodyHasher,
  IndexRobotsTxtSitemap,
  type IndexWebsiteSitemap,
  sitemapTreeForHomepageWithClient,
  type TreeOptions,
  type WalkedDocument,
  type WebClient,
} from '@usp-ts/core';
import type { Mutable } from './mutable.js';
import type { NextState } from './next-state.js';
import { PageTracker } from './page-changes.js';
import type { SiteJobContext } from './site-job.js';
import type { SitePlan } from './site-plan.js';
import type { SiteRows } from './site-rows.js';

export const DEFAULT_SITE_DEADLINE_MS = 10 * 60_000;

/** The body hash the state keeps (`SitemapState.bodySha256`): SHA-256, hex. */
function sha256(): BodyHasher {
  const hash = createHash('sha256');
  return {
    update(chunk) {
      hash.update(chunk);
    },
    digest: () => hash.digest('hex'),
  };
}

/** robots.txt's `Crawl-delay` for every crawler (`*`), in ms. */
function crawlDelayOf(node: IndexRobotsTxtSitemap): number | null {
  for (const g of node.robots?.groups ?? []) {
    if (g.userAgents.includes('*') && g.crawlDelay !== null) return g.crawlDelay * 1000;
  }
  return null;
}

/** What the walk of one site reports to: its rows, and (with a state) its next state. */
export interface SiteWalkParts {
  readonly plan: SitePlan;
  readonly rows: SiteRows;
  /** `null` without a state. */
  readonly next: NextState | null;
  /** The site's view of the shared client (`GatedClient`). */
  readonly client: WebClient;
}

/**
 * Walks the site's documents (core's walk, with the plan's known paths and revisit hooks) and
 * hands each document, with its answer and its page tracker, to the rows and the next state as
 * the walk reports it. A robots.txt's `Crawl-delay` goes to the politeness gate at once.
 */
export function walkDocuments(parts: SiteWalkParts, ctx: SiteJobContext): Promise<IndexWebsiteSitemap> {
  const { plan, rows, next } = parts;
  const onDocument = (doc: WalkedDocument): void => {
    const before = plan.previous(doc.requestedUrl);
    // The page store below made every writer a tracker.
    const tracker = doc.stored instanceof PageTracker ? doc.stored : null;
    rows.document(doc, before, tracker);
    let crawlDelayMs: number | null = null;
    if (doc.node instanceof IndexRobotsTxtSitemap) {
      crawlDelayMs = doc.reused !== null ? (before?.crawlDelayMs ?? null) : crawlDelayOf(doc.node);
      if (crawlDelayMs !== null && crawlDelayMs > 0) {
        // A shared gate that cannot record the delay leaves the host at its per-host limit.
        const host = new URL(doc.node.url).hostname;
        Promise.resolve(ctx.gate.setCrawlDelay(host, crawlDelayMs)).catch(() => {});
      }
    }
    if (next !== null)
      for (const removed of next.document(doc, before, tracker, crawlDelayMs)) rows.emit(removed);
  };
  // Object.assign, not `{ ...ctx.walkOptions }`: V8 gives every object made by an object spread
  // a map of its own, and the walk's every read of its options then went to the runtime.
  const options = Object.assign({}, ctx.walkOptions) as Mutable<TreeOptions>;
  const known = plan.knownPaths(ctx.walkOptions?.extraKnownPaths ?? []);
  if (known !== null) {
    options.knownPaths = known.knownPaths;
    options.extraKnownPaths = known.extraKnownPaths;
  }
  options.webClient = parts.client;
  options.registry = ctx.registry;
  options.deadlineMs = ctx.deadlineMs ?? DEFAULT_SITE_DEADLINE_MS;
  if (ctx.signal !== undefined) options.signal = ctx.signal;
  const revisit = plan.revisit();
  if (revisit !== undefined) options.revisit = revisit;
  options.onDocument = onDocument;
  if (plan.state !== null && plan.prev !== null) options.beforeParse = (doc) => plan.loadPages(doc.finalUrl);
  // The body hash is the state's (`bodySha256`): a run without one does not hash.
  if (plan.state !== null) options.hashBody = sha256;
  options.pageStore = {
    open(url) {
      return new PageTracker({
        site: plan.site,
        sitemap: url,
        emit: rows.emit,
        ...(rows.emitLine !== undefined ? { emitLine: rows.emitLine } : {}),
        ...(rows.emitLines !== undefined ? { emitLines: rows.emitLines } : {}),
        marking: plan.state !== null,
        previous: plan.previousPages(url),
        emitUnchanged: plan.full,
      });
    },
  };
  return sitemapTreeForHomepageWithClient(plan.site, options);
}
