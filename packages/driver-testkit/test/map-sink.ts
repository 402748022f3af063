import type { PageRow, SitemapRow, SiteResult, SiteSink } from '@usp-ts/batch';

export interface MapSite {
  readonly pages: PageRow[];
  readonly sitemaps: SitemapRow[];
  readonly result: SiteResult;
}

/** Keeps each site's last committed copy in a Map: a later copy of a site replaces the earlier. */
export function mapSink(): SiteSink & { readonly sites: Map<string, MapSite> } {
  const sites = new Map<string, MapSite>();
  return {
    sites,
    begin(site) {
      let pages: PageRow[] = [];
      let sitemaps: SitemapRow[] = [];
      return {
        page: (row) => void pages.push(row),
        sitemap: (row) => void sitemaps.push(row),
        async commit(result, options) {
          await options?.fence?.(); // a stale copy rejects here: nothing kept
          await options?.saveState?.({ runId: 'map', site, offsets: {} });
          sites.set(site, { pages, sitemaps, result });
        },
        discard() {
          pages = [];
          sitemaps = [];
        },
      };
    },
  };
}
