import { digestOf, urlSection } from '../src/page-digest.js';

/** A stored digest of layout `version` for `entries` (16 bytes a page) and their URLs, in order. */
export function digestOfUrls(version: 2 | 3 | 4, entries: Uint8Array, urls: readonly string[]): Uint8Array {
  return digestOf(version, entries, urlSection(version, urls), urls.length);
}
