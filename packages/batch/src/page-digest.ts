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

/** A stored digest's entries, and where its URLs are (layout 2) or `null` (layout 1). */
interface DigestLayout {
  readonly buf: Buffer;
  readonly entries: Buffer;
  readonly urls: { readonly count: number; readonly start: number; readonly end: number } | null;
}

function layoutOf(digest: Uint8Array): DigestLayout {
  const buf = Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength);
  const len = buf.length;
  if (len >= TRAILER && buf.readUInt32LE(len - 4) === MAGIC) {
    const count = buf.readUInt32LE(len - TRAILER);
    const urlBytes = buf.readUInt32LE(len - 8);
    const entriesEnd = count * ENTRY_BYTES;
    if (entriesEnd + urlBytes + TRAILER === len) {
      const urls = { count, start: entriesEnd, end: entriesEnd + urlBytes };
      return { buf, entries: buf.subarray(0, entriesEnd), urls };
    }
  }
  return { buf, entries: buf.subarray(0, len - (len % ENTRY_BYTES)), urls: null };
}

/** A stored digest's entries (16 bytes a page), a view: no URL made into a string. */
export function digestEntries(digest: Uint8Array): Buffer {
  return layoutOf(digest).entries;
}

/** Splits a stored digest into its entries and URLs. */
export function readDigest(digest: Uint8Array): DigestParts {
  const { buf, entries, urls } = layoutOf(digest);
  if (urls === null) return { entries, urls: null };
  return { entries, urls: urls.count === 0 ? [] : buf.toString('utf8', urls.start, urls.end).split('\n') };
}

/**
 * The entries of a stored digest, and the URLs of the entries at `indices` (ascending), or `null`
 * for those of layout 1: without making a string of every URL (a 50,000-page sitemap's were
 * ~4 MB of heap a removed page's lookup did not need).
 */
export function digestUrlsAt(
  digest: Uint8Array,
  pick: (entries: Buffer) => readonly number[],
): { entries: Buffer; urls: string[] | null } {
  const { buf, entries, urls } = layoutOf(digest);
  const indices = pick(entries);
  if (urls === null) return { entries, urls: null };
  const out: string[] = [];
  let at = urls.start;
  let k = 0;
  for (let i = 0; i < urls.count && k < indices.length; i++) {
    const nl = buf.indexOf(10, at);
    const end = nl === -1 || nl > urls.end ? urls.end : nl;
    if (i === indices[k]) {
      out.push(buf.toString('utf8', at, end));
      k++;
    }
    at = end + 1;
  }
  return { entries, urls: out };
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
