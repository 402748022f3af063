// The stored digest of a pages sitemap (`SitemapState.pages`), opaque to the stores: 16 bytes a page
// (8 of a hash of its URL, 8 of a hash of its whole row), then the pages' URLs, so that a page gone
// from the sitemap can be reported by its URL (`change: 'removed'`). Layouts 2 and 3:
//   entries (16 × n) | URLs (UTF-8, '\n'-separated) | n (u32 LE) | URL bytes (u32 LE) | 'USP2' or 'USP3'
// Layout 3 (written from this release of @usp-ts/batch on) takes its hashes from `page-hash.ts`' JS hashes,
// each as two 32-bit little-endian lanes; layout 2 from SHA-1 (its first 8 bytes). A digest of
// layout 1 (entries only, SHA-1, from an older usp) is still read; it names no URL, so its removed
// pages are not reported. A document whose last digest is of layout 1 or 2 is compared with SHA-1
// and saved in layout 3 (a cut one in layout 2: see `cutDocumentState`).

/** The layouts a stored digest can be of. */
export type DigestLayoutVersion = 1 | 2 | 3;

/** Bytes a page takes in the entries. */
export const ENTRY_BYTES = 16;
const TRAILER = 12;
const MAGIC_2 = 0x32505355; // 'USP2' read as a little-endian u32
const MAGIC_3 = 0x33505355; // 'USP3'

/** A digest read back: its layout, its entries, and the URL of each (layouts 2, 3) or `null` (layout 1). */
export interface DigestParts {
  readonly version: DigestLayoutVersion;
  /** The entries (16 bytes a page), a view of the digest. */
  readonly entries: Buffer;
  readonly urls: readonly string[] | null;
}

/** A stored digest's entries, and where its URLs are (layout 2) or `null` (layout 1). */
interface DigestLayout {
  readonly version: DigestLayoutVersion;
  readonly buf: Buffer;
  readonly entries: Buffer;
  readonly urls: { readonly count: number; readonly start: number; readonly end: number } | null;
}

function layoutOf(digest: Uint8Array): DigestLayout {
  const buf = Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength);
  const len = buf.length;
  const magic = len >= TRAILER ? buf.readUInt32LE(len - 4) : 0;
  if (magic === MAGIC_2 || magic === MAGIC_3) {
    const count = buf.readUInt32LE(len - TRAILER);
    const urlBytes = buf.readUInt32LE(len - 8);
    const entriesEnd = count * ENTRY_BYTES;
    if (entriesEnd + urlBytes + TRAILER === len) {
      const urls = { count, start: entriesEnd, end: entriesEnd + urlBytes };
      return { version: magic === MAGIC_3 ? 3 : 2, buf, entries: buf.subarray(0, entriesEnd), urls };
    }
  }
  return { version: 1, buf, entries: buf.subarray(0, len - (len % ENTRY_BYTES)), urls: null };
}

/**
 * A stored digest's layout, entries (16 bytes a page), URLs as bytes ('\n'-separated; empty for
 * layout 1) and page count: views, no URL made into a string.
 */
export function digestParts(digest: Uint8Array): {
  version: DigestLayoutVersion;
  entries: Buffer;
  urls: Buffer;
  count: number;
} {
  const { version, buf, entries, urls } = layoutOf(digest);
  if (urls === null)
    return { version, entries, urls: buf.subarray(0, 0), count: entries.length / ENTRY_BYTES };
  return { version, entries, urls: buf.subarray(urls.start, urls.end), count: urls.count };
}

/** Splits a stored digest into its entries and URLs. */
export function readDigest(digest: Uint8Array): DigestParts {
  const { version, buf, entries, urls } = layoutOf(digest);
  if (urls === null) return { version, entries, urls: null };
  return {
    version,
    entries,
    urls: urls.count === 0 ? [] : buf.toString('utf8', urls.start, urls.end).split('\n'),
  };
}

/**
 * The URLs of a stored digest's entries at `indices` (ascending), or `null` for layout 1: without
 * making a string of every URL (a 50,000-page sitemap's were ~4 MB of heap a removed page's lookup
 * did not need).
 */
export function digestUrlsAt(digest: Uint8Array, indices: readonly number[]): string[] | null {
  const { buf, urls } = layoutOf(digest);
  if (urls === null) return null;
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
  return out;
}

/** The digest of layout `version` (2 or 3) for `entries` and `count` URLs as UTF-8, '\n'-separated. */
export function digestOf(version: 2 | 3, entries: Uint8Array, urls: Uint8Array, count: number): Uint8Array {
  const out = Buffer.allocUnsafe(entries.length + urls.length + TRAILER);
  out.set(entries, 0);
  out.set(urls, entries.length);
  out.writeUInt32LE(count, out.length - TRAILER);
  out.writeUInt32LE(urls.length, out.length - 8);
  out.writeUInt32LE(version === 3 ? MAGIC_3 : MAGIC_2, out.length - 4);
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}
