import {
  type DocumentResponse,
  isIndexSitemap,
  isPagesSitemap,
  OK_SUMMARY,
  type Sitemap,
  type WalkSummary,
  type Warning,
} from '@usp-ts/core';
import { type WalkPagesOptions, walkPages } from '../api/tree.js';
import { PageStats, type PageStatsData } from './page-stats.js';
import { type WarningGroup, WarningGroups } from './warning-groups.js';

/**
 * URLs the report lists per sitemap, and in all: the list is for looking up and browsing, the
 * counts beside it are exact. 20,000 URLs keep a million-page report at a few MB.
 */
export const URLS_PER_SITEMAP = 1_000;
export const MAX_LISTED_URLS = 20_000;

/** One sitemap of the tree, flat in depth-first order (`depth` rebuilds the nesting). */
export interface ReportSitemap {
  url: string;
  type: string;
  depth: number;
  /** HTTP status of its request; 304 not modified; `null` with no HTTP answer or no request. */
  status: number | null;
  /** Body bytes read (after transport decoding), `null` when not requested. */
  bytes: number | null;
  ms: number | null;
  /** Its own pages; for an index the sum below it. */
  pages: number;
  warnings: number;
  /** Why it could not be read (InvalidSitemap), else `null`. */
  reason: string | null;
  /** The first URLS_PER_SITEMAP of its pages, while MAX_LISTED_URLS allows. */
  urls: string[];
}

export interface SiteReportData {
  kind: 'site';
  url: string;
  generatedAt: string;
  summary: WalkSummary;
  sitemaps: ReportSitemap[];
  stats: PageStatsData;
  warnings: WarningGroup[];
  listedUrls: number;
}

export interface SiteReportRun {
  url: string;
  /** The walk's options, as `ls` builds them. */
  options: WalkPagesOptions;
  /** Sees every warning as it comes (the CLI logs them as `ls` does). */
  onWarning?: (warning: Warning) => void;
  /** "Today" for the freshness figures (default now). */
  now?: number;
}

/** Walks a site as `ls` does and gathers what its report shows; pages are counted, not kept. */
export async function collectSiteReport(run: SiteReportRun): Promise<SiteReportData> {
  const stats = new PageStats(run.now);
  const warnings = new WarningGroups();
  // By node: the walk hands each document's answer over with its node (the time includes the
  // transfer and the parse that reads along with it, as a user waiting for that sitemap sees it).
  const nodeFacts = new Map<Sitemap, DocumentResponse>();
  const urls = new Map<string, string[]>();
  let listed = 0;
  const walk = walkPages(run.url, {
    ...run.options,
    onWarning: (w) => {
      warnings.add(w);
      run.onWarning?.(w);
    },
    onDocument: (doc) => {
      if (doc.response !== null) nodeFacts.set(doc.node, doc.response);
      run.options.onDocument?.(doc);
    },
  });
  for await (const { page, sitemap } of walk) {
    stats.add(page);
    if (listed >= MAX_LISTED_URLS) continue;
    let list = urls.get(sitemap.url);
    if (list === undefined) {
      list = [];
      urls.set(sitemap.url, list);
    }
    if (list.length < URLS_PER_SITEMAP) {
      list.push(page.url);
      listed++;
    }
  }
  const sitemaps: ReportSitemap[] = [];
  if (walk.tree !== null) flatten(walk.tree, 0, { facts: nodeFacts, urls, warnings }, sitemaps);
  return {
    kind: 'site',
    url: walk.tree?.url ?? run.url,
    generatedAt: new Date(run.now ?? Date.now()).toISOString(),
    summary: walk.summary ?? OK_SUMMARY,
    sitemaps,
    stats: stats.finish(),
    warnings: warnings.groups(),
    listedUrls: listed,
  };
}

interface FlattenContext {
  facts: Map<Sitemap, DocumentResponse>;
  urls: Map<string, string[]>;
  warnings: WarningGroups;
}

/** Appends `node` and its descendants depth-first; returns the pages at and below it. */
function flatten(node: Sitemap, depth: number, ctx: FlattenContext, out: ReportSitemap[]): number {
  const facts = ctx.facts.get(node);
  const row: ReportSitemap = {
    url: node.url,
    type: node.type,
    depth,
    status: facts?.status ?? null,
    bytes: facts?.bytes ?? null,
    ms: facts === undefined ? null : Math.round(facts.ms),
    pages: 0,
    warnings: ctx.warnings.countFor(node.url),
    reason: node.type === 'InvalidSitemap' ? node.reason : null,
    urls: ctx.urls.get(node.url) ?? [],
  };
  out.push(row);
  if (isPagesSitemap(node)) row.pages = node.pageCount;
  else if (isIndexSitemap(node))
    for (const child of node.subSitemaps) row.pages += flatten(child, depth + 1, ctx, out);
  return row.pages;
}
