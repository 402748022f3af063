import { urlKey } from '../engine/url.js';

/** The ancestors of a node: keys for cycle checks, URLs as usp reports them to callbacks. */
export interface Ancestry {
  readonly keys: ReadonlySet<string>;
  readonly urls: ReadonlySet<string>;
}

export const NO_ANCESTORS: Ancestry = { keys: new Set(), urls: new Set() };

/** A cycle key that never throws (a URL the helper cannot read is its own key). */
export function safeKey(url: string): string {
  try {
    return urlKey(url);
  } catch {
    return url;
  }
}

/** Python's set repr, elements sorted, as usp's reasons print parent URLs. */
export function setRepr(urls: ReadonlySet<string>): string {
  if (urls.size === 0) return 'set()';
  return `{${[...urls]
    .sort()
    .map((u) => `'${u}'`)
    .join(', ')}}`;
}
