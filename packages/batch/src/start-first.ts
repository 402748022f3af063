import type { SiteLine } from './site-list.js';

/**
 * How far ahead of the sites being started a batch reads its list for sites to start first: a
 * few hundred KB of lines at most, and on the bench's no-change run (16 sites at once, about
 * 2 ms a site) more than the 1.5 s probe of a site that gave no answer last time.
 */
export const START_FIRST_LOOK_AHEAD = 1_000;

/**
 * The lines of a batch in the order their sites should start: as listed, except that a site in
 * `first` moves ahead of every line before it once the reader is within `lookAhead` lines of it.
 * A batch uses it for the sites that gave no answer on their previous run: each gets one probe
 * that may wait its whole timeout, and started late, that wait is what the run ends on. The list
 * is read ahead only while some of `first` has not been seen; afterwards lines pass through.
 */
export async function* startFirst(
  lines: AsyncIterable<SiteLine>,
  first: ReadonlySet<string>,
  lookAhead: number = START_FIRST_LOOK_AHEAD,
): AsyncGenerator<SiteLine> {
  const it = lines[Symbol.asyncIterator]();
  const wanted = new Set(first);
  const ahead: SiteLine[] = [];
  const pulled: SiteLine[] = [];
  let ended = false;
  try {
    for (;;) {
      while (!ended && wanted.size > 0 && ahead.length < lookAhead) {
        const r = await it.next();
        if (r.done === true) {
          ended = true;
          break;
        }
        const line = r.value;
        if (line.kind === 'site' && wanted.delete(line.site)) pulled.push(line);
        else ahead.push(line);
      }
      const next = pulled.shift() ?? ahead.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (ended) return;
      const r = await it.next();
      if (r.done === true) return;
      yield r.value;
    }
  } finally {
    await it.return?.(undefined);
  }
}
