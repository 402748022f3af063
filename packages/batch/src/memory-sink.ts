import type { PageRow, SitemapRow, SiteResult } from './rows.js';
import type { SiteSink } from './site-sink.js';

/** The rows of a `memorySink`, in commit order. */
export interface MemoryRows {
  readonly pages: PageRow[];
  readonly sitemaps: SitemapRow[];
  readonly sites: SiteResult[];
}

/** One committed copy of a site, kept so that a later copy can make it void. */
interface Copy {
  readonly token: string | null;
  readonly pages: readonly PageRow[];
  readonly sitemaps: readonly SitemapRow[];
  readonly result: SiteResult;
}

/**
 * Keeps committed rows in arrays (tests, small runs). A copy a later commit names void is taken
 * out of `rows` at that commit. `done` lists the sites committed.
 */
export function memorySink(
  runId = 'memory',
): SiteSink & { readonly rows: MemoryRows; readonly done: ReadonlySet<string> } {
  const rows: MemoryRows = { pages: [], sitemaps: [], sites: [] };
  const done = new Set<string>();
  const copies: Copy[] = [];
  const rebuild = (): void => {
    rows.pages.length = 0;
    rows.sitemaps.length = 0;
    rows.sites.length = 0;
    for (const c of copies) {
      rows.pages.push(...c.pages);
      rows.sitemaps.push(...c.sitemaps);
      rows.sites.push(c.result);
    }
  };
  return {
    rows,
    done,
    begin() {
      let pages: PageRow[] = [];
      let sitemaps: SitemapRow[] = [];
      return {
        page: (row) => pages.push(row),
        sitemap: (row) => sitemaps.push(row),
        async commit(result, options) {
          const copy = options?.fence === undefined ? null : await options.fence();
          // The rows count as kept only once the state is saved: the offsets are those after them.
          const offsets = {
            pages: rows.pages.length + pages.length,
            sitemaps: rows.sitemaps.length + sitemaps.length,
            sites: rows.sites.length + 1,
          };
          await options?.saveState?.({ runId, site: result.site, offsets });
          copies.push({ token: copy?.token ?? null, pages, sitemaps, result });
          rows.pages.push(...pages);
          rows.sitemaps.push(...sitemaps);
          rows.sites.push(result);
          pages = [];
          sitemaps = [];
          if (copy !== null && copy.voids.length > 0) {
            const voided = new Set(copy.voids);
            for (let i = copies.length - 1; i >= 0; i--) {
              const token = copies[i].token;
              if (token !== null && voided.has(token)) copies.splice(i, 1);
            }
            rebuild();
          }
          done.add(result.site);
        },
        discard() {
          pages = [];
          sitemaps = [];
        },
      };
    },
    async close() {},
  };
}
