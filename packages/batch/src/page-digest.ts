// The stored digest of a pages sitemap (`SitemapState.pages`), opaque to the stores: 16 bytes a page
// (8 of a hash of its URL, 8 of a hash of its whole row), then the pages' URLs, so that a page gone
// from the sitemap can be reported by its URL (`change: 'removed'`). Layouts 2 to 4:
//   entries (16 × n) | URLs | n (u32 LE) | URL bytes (u32 LE) | 'USP2', 'USP3' or 'USP4'
// Layout 4 (written from this release of @usp-ts/batch on) takes its hashes from `page-hash.ts`' JS
// hashes, each as two 32-bit little-endian lanes, and front-codes its URLs: each URL is one byte p
// (0-126: how many bytes it starts with of the URL before it), then its other bytes
// (UTF-8), the URLs '\n'-separated; a URL whose other bytes hold a '\n' is the byte 127 then its
// JSON text (which holds none). A sitemap's URLs share long prefixes: a fresh run of the bench's
// 1,000 sites stored 28 MB of digests in layout 3, ~12 MB in layout 4. Layout 3 has layout 4's
// hashes and its URLs whole (UTF-8, '\n'-separated); layout 2 the same URLs and SHA-1 (its first 8
// bytes). A digest of layout 1 (entries only, SHA-1, from an older usp) is still read; it names no
// URL, so its removed pages are not reported. A document whose last digest is of layout 1 or 2 is
// compared with SHA-1 and saved in layout 4 (a cut one in layout 2: see `cutDocumentState`); one of
// layout 3 is compared as layout 4 (the same hashes) and saved in layout 4.

/** The layouts a stored digest can be of. */
export type DigestLayoutVersion = 1 | 2 | 3 | 4;

/** Bytes a page takes in the entries. */
export const ENTRY_BYTES = 16;
const TRAILER = 12;
const MAGIC_2 = 0x32505355; // 'USP2' read as a little-endian u32
const MAGIC_3 = 0x33505355; // 'USP3'
const MAGIC_4 = 0x34505355; // 'USP4'
/** The longest shared prefix a layout 4 URL says (its first byte stays ASCII, one byte of UTF-8). */
const MAX_SHARED = 126;
/** The first byte of a layout 4 URL given as its JSON text. */
const ESCAPED = 127;
/** The first byte of a layout 4 URL for each length shared with the URL before it. */
const SHARED_CHAR: readonly string[] = Array.from({ length: ESCAPED + 1 }, (_, i) => String.fromCharCode(i));

/** A digest read back: its layout, its entries, and the URL of each (layouts 2-4) or `null` (layout 1). */
export interface DigestParts {
  readonly version: DigestLayoutVersion;
  /** The entries (16 bytes a page), a view of the digest. */
  readonly entries: Buffer;
  readonly urls: readonly string[] | null;
}

/** A stored digest's entries, and where its URLs are (layouts 2-4) or `null` (layout 1). */
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
  if (magic === MAGIC_2 || magic === MAGIC_3 || magic === MAGIC_4) {
    const count = buf.readUInt32LE(len - TRAILER);
    const urlBytes = buf.readUInt32LE(len - 8);
    const entriesEnd = count * ENTRY_BYTES;
    if (entriesEnd + urlBytes + TRAILER === len) {
      const urls = { count, start: entriesEnd, end: entriesEnd + urlBytes };
      const version = magic === MAGIC_4 ? 4 : magic === MAGIC_3 ? 3 : 2;
      return { version, buf, entries: buf.subarray(0, entriesEnd), urls };
    }
  }
  return { version: 1, buf, entries: buf.subarray(0, len - (len % ENTRY_BYTES)), urls: null };
}

/**
 * A stored digest's layout, entries (16 bytes a page), URLs as stored (layouts 2, 3: '\n'-separated;
 * 4: front-coded; empty for layout 1) and page count: views, no URL made into a string.
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

/** A layout 4 URL given as JSON text ('' when the text is not a JSON string: a damaged digest). */
function jsonUrl(text: string): string {
  try {
    const url: unknown = JSON.parse(text);
    return typeof url === 'string' ? url : '';
  } catch {
    return '';
  }
}

/**
 * Calls `visit` with each URL's index and bytes, in order, while it returns true: `bytes` from
 * `start` to `end`, valid only during the call (layout 4's are rebuilt in one Buffer, URL after URL).
 */
function eachUrl(
  l: DigestLayout,
  visit: (i: number, bytes: Buffer, start: number, end: number) => boolean,
): void {
  const { buf, urls } = l;
  if (urls === null) return;
  let at = urls.start;
  // Layout 4's URLs are rebuilt here, each from the bytes of the one before (no more of them than
  // it had, whatever a damaged digest says).
  let url = l.version === 4 ? Buffer.alloc(256) : buf;
  let length = 0;
  for (let i = 0; i < urls.count; i++) {
    const from = l.version === 4 ? Math.min(at + 1, urls.end) : at;
    const nl = buf.indexOf(10, from);
    const end = nl === -1 || nl > urls.end ? urls.end : nl;
    let go: boolean;
    if (l.version === 4) {
      const first = at < urls.end ? (buf[at] as number) : 0;
      if (first === ESCAPED) {
        const text = jsonUrl(buf.toString('utf8', from, end));
        length = Buffer.byteLength(text);
        if (length > url.length) url = Buffer.alloc(Math.max(length, url.length * 2));
        url.write(text, 0);
      } else {
        const shared = Math.min(first, MAX_SHARED, length);
        length = shared + end - from;
        if (length > url.length) {
          const grown = Buffer.alloc(Math.max(length, url.length * 2));
          url.copy(grown, 0, 0, shared);
          url = grown;
        }
        buf.copy(url, shared, from, end);
      }
      go = visit(i, url, 0, length);
    } else go = visit(i, buf, at, end);
    if (!go) return;
    at = end + 1;
  }
}

/** Splits a stored digest into its entries and URLs. */
export function readDigest(digest: Uint8Array): DigestParts {
  const l = layoutOf(digest);
  const { version, buf, entries, urls } = l;
  if (urls === null) return { version, entries, urls: null };
  if (urls.count === 0) return { version, entries, urls: [] };
  if (version !== 4)
    return { version, entries, urls: buf.toString('utf8', urls.start, urls.end).split('\n') };
  const out: string[] = [];
  eachUrl(l, (_, bytes, start, end) => {
    out.push(bytes.toString('utf8', start, end));
    return true;
  });
  return { version, entries, urls: out };
}

/**
 * The URLs of a stored digest's entries at `indices` (ascending), or `null` for layout 1: without
 * making a string of every URL (a 50,000-page sitemap's were ~4 MB of heap a removed page's lookup
 * did not need).
 */
export function digestUrlsAt(digest: Uint8Array, indices: readonly number[]): string[] | null {
  const l = layoutOf(digest);
  if (l.urls === null) return null;
  const out: string[] = [];
  let k = 0;
  eachUrl(l, (i, bytes, start, end) => {
    if (i === indices[k]) {
      out.push(bytes.toString('utf8', start, end));
      k++;
    }
    return k < indices.length;
  });
  return out;
}

/**
 * Layout 4's form of `url` after `before` (the URL before it; '' for the first), as text: the
 * UTF-8 bytes of the code units it starts with of `before` (at most 126 bytes, none of them a
 * surrogate: each unit before is its own bytes), then the rest.
 */
export function frontCoded(before: string, url: string): string {
  const n = Math.min(before.length, url.length);
  let i = 0;
  let bytes = 0;
  while (i < n) {
    const c = url.charCodeAt(i);
    if (c !== before.charCodeAt(i)) break;
    const b = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0xd800 || c > 0xdfff ? 3 : MAX_SHARED + 1;
    if (bytes + b > MAX_SHARED) break;
    bytes += b;
    i++;
  }
  if (url.indexOf('\n', i) !== -1) return SHARED_CHAR[ESCAPED] + JSON.stringify(url);
  return (SHARED_CHAR[bytes] as string) + url.slice(i);
}

/** The URLs section of a digest of layout `version` for `urls`, in order. */
export function urlSection(version: 2 | 3 | 4, urls: readonly string[]): Buffer {
  if (version !== 4) return Buffer.from(urls.join('\n'));
  return Buffer.from(
    urls.map((url, i) => frontCoded(i === 0 ? '' : (urls[i - 1] as string), url)).join('\n'),
  );
}

/**
 * The digest of layout `version` (2 to 4) for `entries` and `count` URLs, `urls` as that layout
 * stores them (`urlSection`).
 */
export function digestOf(
  version: 2 | 3 | 4,
  entries: Uint8Array,
  urls: Uint8Array,
  count: number,
): Uint8Array {
  const out = Buffer.allocUnsafe(entries.length + urls.length + TRAILER);
  out.set(entries, 0);
  out.set(urls, entries.length);
  out.writeUInt32LE(count, out.length - TRAILER);
  out.writeUInt32LE(urls.length, out.length - 8);
  out.writeUInt32LE(version === 4 ? MAGIC_4 : version === 3 ? MAGIC_3 : MAGIC_2, out.length - 4);
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}
