import { InvalidOptionError } from '../contract/errors.js';

/**
 * Throws `InvalidOptionError` for the first key of `options` that `known` does not have, naming
 * the closest known key when there is one. TypeScript catches a misspelt option at compile time;
 * this catches it in plain JavaScript too, where `maxPage: 10` would otherwise be ignored.
 *
 * `known` is a table of every accepted key; write it as
 * `{ a: true, b: true } satisfies Record<keyof Options, true>` so it cannot fall behind the type.
 * `elsewhere` names where an unknown key belongs instead, when the caller knows (a network option
 * given beside the walk's: `webClientOptions.requestTimeoutMs`); it wins over the closest key.
 */
export function rejectUnknownOptions(
  options: object | undefined | null,
  known: Readonly<Record<string, unknown>>,
  path = '',
  elsewhere?: (key: string) => string | null,
): void {
  if (options === null || options === undefined || typeof options !== 'object') return;
  for (const key of Object.keys(options)) {
    if (Object.hasOwn(known, key)) continue;
    const near = elsewhere?.(key) ?? closest(key, Object.keys(known));
    throw new InvalidOptionError(
      `${path}${key}`,
      `unknown option${near === null ? '' : ` (did you mean ${near}?)`}`,
    );
  }
}

/** The known name within a small edit distance of `key` (typos, case), if any. */
function closest(key: string, names: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Math.max(2, Math.floor(key.length / 4)) + 1;
  const lower = key.toLowerCase();
  for (const name of names) {
    const d = lower === name.toLowerCase() ? 0 : editDistance(lower, name.toLowerCase(), bestDistance);
    if (d < bestDistance) {
      bestDistance = d;
      best = name;
    }
  }
  return best;
}

/** Levenshtein distance, giving up (returning `limit`) once it is certain to reach `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) >= limit) return limit;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      row.push(v);
      if (v < rowMin) rowMin = v;
    }
    if (rowMin >= limit) return limit;
    prev = row;
  }
  return Math.min(prev[b.length], limit);
}
