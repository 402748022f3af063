import { countingPageStore, isIndexSitemap, OK_SUMMARY, type Registry, type Warning } from '@usp-ts/core';
import { LOCAL_DUMMY_URL, parseSitemapDocument } from '../api/document.js';
import { PageStats } from './page-stats.js';
import { MAX_LISTED_URLS, type ReportSitemap, type SiteReportData, URLS_PER_SITEMAP } from './site-report.js';
import { WarningGroups } from './warning-groups.js';

export interface FileReportRun {
  body: AsyncIterable<Uint8Array>;
  /** The file's name, shown where the report names the document. */
  name: string;
  registry?: Registry;
  onWarning?: (warning: Warning) => void;
  signal?: AbortSignal;
  now?: number;
}

/** One document on disk, read as `usp parse` reads it: an index's children are listed, not fetched. */
export async function collectFileReport(run: FileReportRun): Promise<SiteReportData> {
  const stats = new PageStats(run.now);
  const warnings = new WarningGroups();
  const urls: string[] = [];
  const parsed = await parseSitemapDocument(run.body, {
    ...(run.registry !== undefined ? { registry: run.registry } : {}),
    url: LOCAL_DUMMY_URL,
    pageStore: countingPageStore(),
    onWarning: (w) => {
      const named = { ...w, url: run.name };
      warnings.add(named);
      run.onWarning?.(named);
    },
    signal: run.signal,
    async onPages(pages) {
      for (const page of pages) {
        stats.add(page);
        if (urls.length < Math.min(URLS_PER_SITEMAP, MAX_LISTED_URLS)) urls.push(page.url);
      }
    },
  });
  const node = parsed.sitemap;
  const root: ReportSitemap = {
    url: run.name,
    type: node.type,
    depth: 0,
    status: null,
    bytes: parsed.bytes,
    ms: null,
    pages: stats.data.pages,
    warnings: warnings.countFor(run.name),
    reason: node.type === 'InvalidSitemap' ? node.reason : null,
    urls,
  };
  const children: ReportSitemap[] = isIndexSitemap(node)
    ? node.subSitemaps.map((child) => ({
        url: child.url,
        type: child.type,
        depth: 1,
        status: null,
        bytes: null,
        ms: null,
        pages: 0,
        warnings: 0,
        reason: child.type === 'InvalidSitemap' ? child.reason : null,
        urls: [],
      }))
    : [];
  return {
    kind: 'site',
    url: run.name,
    generatedAt: new Date(run.now ?? Date.now()).toISOString(),
    summary: OK_SUMMARY,
    sitemaps: [root, ...children],
    stats: stats.finish(),
    warnings: warnings.groups(),
    listedUrls: urls.length,
  };
}
