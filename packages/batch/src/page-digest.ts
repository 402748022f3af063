// The stored digest of a pages sitemap (`SitemapState.pages`), opaque to the stores: 16 bytes a page
// (8 of a hash of its URL, 8 of a hash of its whole row), then the pages' URLs, so that a page gone
// from the sitemap can be reported by its URL (`change: 'removed'`). Layout 2:
//   entries (16 × n) | URLs (UTF-8, '\n'-separated) | n (u32 LE) | URL bytes (u32 LE) | 'USP2'
// A digest of layout 1 (entries only, from an older usp) is still read; it names no URL, so its
// removed pages are not reported (the next save writes layout 2).

/** Bytes a page takes in the entries. */
export const ENTRY_BYTES = 16;
const TRAILER = 12;
const MAGIC = 0x32505355; // 'USP2' read as a little-endian u32

/** A digest read back: its entries, and the URL of each (layout 2) or `null` (layout 1). */
export interface DigestParts {
  /** The entries (16 bytes a page), a view of the digest. */
  readonly entries: Buffer;
  readonly urls: readonly string[] | null;
}

/** Splits a stored digest into its entries and URLs. */
export function readDigest(digest: Uint8Array): DigestParts {
  const buf = Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength);
  const len = buf.length;
  if (len >= TRAILER && buf.readUInt32LE(len - 4) === MAGIC) {
    const count = buf.readUInt32LE(len - TRAILER);
    const urlBytes = buf.readUInt32LE(len - 8);
    const entriesEnd = count * ENTRY_BYTES;
    if (entriesEnd + urlBytes + TRAILER === len) {
      const text = buf.toString('utf8', entriesEnd, entriesEnd + urlBytes);
      return { entries: buf.subarray(0, entriesEnd), urls: count === 0 ? [] : text.split('\n') };
    }
  }
  return { entries: buf.subarray(0, len - (len % ENTRY_BYTES)), urls: null };
}

/** The digest of layout 2 for `entries` (16 bytes a page) and their URLs, in the same order. */
export function writeDigest(entries: Uint8Array, urls: readonly string[]): Uint8Array {
  return digestOf(entries, Buffer.from(urls.join('\n')), urls.length);
}

/** The digest of layout 2 for `entries` (16 bytes a page) and `count` URLs as UTF-8, '\n'-separated. */
export function digestOf(entries: Uint8Array, urls: Uint8Array, count: number): Uint8Array {
  const out = Buffer.allocUnsafe(entries.length + urls.length + TRAILER);
  out.set(entries, 0);
  out.set(urls, entries.length);
  out.writeUInt32LE(count, out.length - TRAILER);
  out.writeUInt32LE(urls.length, out.length - 8);
  out.writeUInt32LE(MAGIC, out.length - 4);
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}

/** The URL hashes (8-character latin1 keys) of a digest's entries. */
export function urlHashesOf(entries: Buffer): Set<string> {
  const set = new Set<string>();
  for (let i = 0; i + ENTRY_BYTES <= entries.length; i += ENTRY_BYTES)
    set.add(entries.toString('latin1', i, i + 8));
  return set;
}
