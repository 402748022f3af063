import type { SiteLine } from './site-list.js';
import type { StateStore } from './state-store.js';

/**
 * The lines of a batch as they are, read `count` at a time: before a group of lines is handed
 * on, the state is told the sites among them that will be walked (`StateStore.willLoad`), so
 * that a store across a network reads their states in one request instead of one a site. The
 * list is read at most `count` lines ahead of the sites being started.
 */
export async function* readAhead(
  lines: AsyncIterable<SiteLine>,
  count: number,
  state: Required<Pick<StateStore, 'willLoad'>>,
  walked: (site: string) => boolean,
): AsyncGenerator<SiteLine> {
  const it = lines[Symbol.asyncIterator]();
  try {
    for (;;) {
      const group: SiteLine[] = [];
      let ended = false;
      while (group.length < count) {
        const r = await it.next();
        if (r.done === true) {
          ended = true;
          break;
        }
        group.push(r.value);
      }
      const sites: string[] = [];
      for (const line of group) if (line.kind === 'site' && walked(line.site)) sites.push(line.site);
      if (sites.length > 0) state.willLoad(sites);
      yield* group;
      if (ended) return;
    }
  } finally {
    await it.return?.(undefined);
  }
}
