import { type RunMark, type SiteState, type StateStore, UspError } from '@usp-ts/core';

/**
 * The state in memory, for tests and one-off runs. Values are copied in and out (structured
 * clone), so a caller editing what it passed or got back never changes the store.
 */
export function memoryStateStore(): StateStore {
  const sites = new Map<string, SiteState>();
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
    async saveSite(state, mark) {
      open();
      sites.set(state.site, structuredClone(state));
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
