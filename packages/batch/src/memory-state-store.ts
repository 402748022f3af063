import { UspError } from '@usp-ts/core';
import type { RunMark, SiteState, StateStore } from './state-store.js';

/**
 * The state in memory, for tests and one-off runs. Values are copied in and out (structured
 * clone), so a caller editing what it passed or got back never changes the store. Page digests
 * are kept apart from the site's state, as a persistent store keeps them (`loadPages`).
 */
export function memoryStateStore(): StateStore {
  const sites = new Map<string, SiteState>();
  /** site → sitemap URL → digest. */
  const digests = new Map<string, Map<string, Uint8Array>>();
  const marks = new Map<string, RunMark>();
  let closed = false;
  const open = (): void => {
    if (closed) throw new UspError('USP_CLOSED', 'memoryStateStore: used after close()');
  };
  return {
    async loadSite(site) {
      open();
      const s = sites.get(site);
      return s === undefined ? null : structuredClone(s);
    },
    async loadPages(site, url) {
      open();
      return digests.get(site)?.get(url)?.slice() ?? null;
    },
    async unreachableSites() {
      open();
      return new Set([...sites.values()].filter((s) => s.unreachable !== null).map((s) => s.site));
    },
    async saveSite(state, mark) {
      open();
      const before = digests.get(state.site);
      const kept = new Map<string, Uint8Array>();
      for (const s of state.sitemaps) {
        const pages = s.pages === undefined ? before?.get(s.url) : (s.pages?.slice() ?? undefined);
        if (pages !== undefined) kept.set(s.url, pages);
      }
      const sitemaps = state.sitemaps.map(({ pages: _, ...s }) => s);
      sites.set(state.site, structuredClone({ ...state, sitemaps }));
      digests.set(state.site, kept);
      if (mark !== undefined) marks.set(mark.runId, structuredClone(mark));
    },
    async lastMark(runId) {
      open();
      const m = marks.get(runId);
      return m === undefined ? null : structuredClone(m);
    },
    async close() {
      closed = true;
    },
  };
}
