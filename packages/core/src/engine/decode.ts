/**
 * Bytes to text, streaming. The encoding comes from, in order: a byte order mark, the UTF-16
 * pattern of `<` (`3C 00` / `00 3C`) without one, the encoding declared in the XML prolog when
 * the platform's `TextDecoder` knows it and the bytes agree, else UTF-8. Invalid sequences
 * become U+FFFD; nothing here throws on content.
 */

import { concatBytes } from './bytes.js';

/** Receives problems with the document's encoding (warning code `encoding`). */
export type EncodingWarn = (code: 'encoding', message: string) => void;

export interface DocumentDecoder {
  /** Decoded text of these bytes; `''` while the start of the document is still being examined. */
  write(bytes: Uint8Array): string;
  /** The input is over: decodes what is held back (a cut multi-byte sequence becomes U+FFFD). */
  end(): string;
  /** The WHATWG name of the encoding in use, `null` until decided. */
  readonly encoding: string | null;
}

// The XML declaration must come first; we look for it within this many bytes.
const PROLOG_BYTES = 1024;

/** A decoder for one document. `warn` hears about declarations we had to ignore. */
export function createDocumentDecoder(warn: EncodingWarn = () => {}): DocumentDecoder {
  let held: Uint8Array | null = null;
  let decoder: TextDecoder | null = null;
  // UTF-8 (nearly every document) is not decoded with `{ stream: true }`: Node's TextDecoder
  // streams through ICU at ~1.6 ns a byte and decodes a whole buffer at ~0.35 (4.5 MB: 7.5
  // against 1.6 ms). Each write is decoded whole up to its last complete character and the cut
  // one carried to the next write, which gives the text streaming gives (see `completeUtf8`).
  let utf8: Utf8Pieces | null = null;
  // Set when the bytes decided the encoding (BOM, UTF-16 pattern): a declaration that says
  // otherwise is then only worth a warning.
  let checkDeclaration = false;

  function decide(bytes: Uint8Array, final: boolean): boolean {
    const detected = detectEncoding(bytes, final, warn);
    if (detected === undefined) return false;
    decoder = new TextDecoder(detected.encoding);
    if (decoder.encoding === 'utf-8') utf8 = new Utf8Pieces();
    checkDeclaration = detected.byBytes;
    return true;
  }

  function decodeHead(bytes: Uint8Array, stream: boolean): string {
    const active = decoder as TextDecoder;
    const text = utf8 !== null ? utf8.head(bytes, !stream) : active.decode(bytes, { stream });
    if (checkDeclaration) {
      checkDeclaration = false;
      const declared = declaredEncoding(text);
      if (declared !== null && !declarationAgrees(declared, active.encoding)) {
        warn(
          'encoding',
          `The document declares encoding "${declared}" but its bytes say ${active.encoding}; decoded as ${active.encoding}`,
        );
      }
    }
    return text;
  }

  return {
    get encoding() {
      return decoder?.encoding ?? null;
    },
    write(bytes) {
      if (utf8 !== null) return utf8.write(bytes, false);
      if (decoder !== null) return decoder.decode(bytes, { stream: true });
      const all: Uint8Array = held === null ? bytes : concatBytes([held, bytes]);
      if (!decide(all, false)) {
        held = all;
        return '';
      }
      held = null;
      return decodeHead(all, true);
    },
    end() {
      if (decoder === null) {
        const all = held ?? new Uint8Array(0);
        held = null;
        decide(all, true);
        return decodeHead(all, false);
      }
      if (utf8 !== null) return utf8.write(EMPTY_BYTES, true);
      return decoder.decode();
    },
  };
}

const EMPTY_BYTES = new Uint8Array(0);

/** UTF-8 decoded a write at a time, each cut after its last complete character. */
class Utf8Pieces {
  // The BOM is removed by `head`; one inside the document is a character (U+FEFF).
  readonly #decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  /** The start of a character cut by the end of the last write (at most 3 bytes, copied). */
  #carry: Uint8Array | null = null;

  /** The document's first bytes: a byte order mark is dropped, as a streaming decoder does. */
  head(bytes: Uint8Array, final: boolean): string {
    const bom = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
    return this.write(bom ? bytes.subarray(3) : bytes, final);
  }

  write(bytes: Uint8Array, final: boolean): string {
    const carry = this.#carry;
    const all = carry === null ? bytes : concatBytes([carry, bytes]);
    const cut = final ? all.length : completeUtf8(all);
    this.#carry = cut < all.length ? all.slice(cut) : null;
    if (cut === 0) return '';
    return this.#decoder.decode(cut === all.length ? all : all.subarray(0, cut));
  }
}

/**
 * How many of `bytes` end at a point where a streaming decoder is back in its initial state:
 * all of them, or up to the lead byte of a sequence the last bytes leave incomplete. Any byte
 * that is not a continuation byte (80-BF) resets the WHATWG decoder (an unfinished sequence
 * before it becomes one U+FFFD either way), so decoding the two sides apart gives the same text
 * as decoding them together.
 */
export function completeUtf8(bytes: Uint8Array): number {
  const n = bytes.length;
  for (let k = n - 1; k >= 0 && k >= n - 3; k--) {
    const b = bytes[k] as number;
    if (b < 0x80) return n;
    if (b >= 0xc0) return n - k >= (b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2) ? n : k;
  }
  return n;
}

export interface DetectedEncoding {
  /** A WHATWG encoding name `TextDecoder` accepts. */
  readonly encoding: string;
  /** Decided by a BOM or the UTF-16 byte pattern (stronger than any declaration). */
  readonly byBytes: boolean;
}

/**
 * The encoding of a document starting with `bytes`; `undefined` when more bytes are needed
 * to tell (never when `final`).
 */
export function detectEncoding(
  bytes: Uint8Array,
  final: boolean,
  warn: EncodingWarn = () => {},
): DetectedEncoding | undefined {
  const n = bytes.length;
  if (n < 4 && !final) return undefined;
  if (n >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return BYTES_UTF8;
  if (n >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return BYTES_UTF16LE;
  if (n >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return BYTES_UTF16BE;
  if (n >= 4) {
    // No BOM: `<` or whitespace, then a non-zero byte, each paired with a zero byte.
    if (bytes[1] === 0 && bytes[3] === 0 && isAsciiMarkupStart(bytes[0]) && bytes[2] !== 0)
      return BYTES_UTF16LE;
    if (bytes[0] === 0 && bytes[2] === 0 && isAsciiMarkupStart(bytes[1]) && bytes[3] !== 0)
      return BYTES_UTF16BE;
  }
  // ASCII-compatible: look for `<?xml ... encoding="..."?>` after any whitespace.
  let i = 0;
  while (i < n && i < PROLOG_BYTES && isAsciiWhitespace(bytes[i])) i++;
  if (i + 5 > n) return final || i >= PROLOG_BYTES ? DEFAULT_UTF8 : undefined;
  if (!startsWithXmlDecl(bytes, i)) return DEFAULT_UTF8;
  const end = indexOfDeclEnd(bytes, i + 5, Math.min(n, PROLOG_BYTES));
  if (end === -1) return final || n >= PROLOG_BYTES ? DEFAULT_UTF8 : undefined;
  const declared = declaredEncoding(latin1(bytes, i, end));
  return declared === null ? DEFAULT_UTF8 : { encoding: chooseDeclared(declared, warn), byBytes: false };
}

const BYTES_UTF8: DetectedEncoding = { encoding: 'utf-8', byBytes: true };
const BYTES_UTF16LE: DetectedEncoding = { encoding: 'utf-16le', byBytes: true };
const BYTES_UTF16BE: DetectedEncoding = { encoding: 'utf-16be', byBytes: true };
const DEFAULT_UTF8: DetectedEncoding = { encoding: 'utf-8', byBytes: false };

function declarationAgrees(declared: string, actual: string): boolean {
  const label = declared.trim().toLowerCase();
  if (label === 'utf-16' || label === 'utf16') return actual.startsWith('utf-16');
  if (label === 'us-ascii' || label === 'ascii') return actual === 'utf-8';
  try {
    return new TextDecoder(label).encoding === actual;
  } catch {
    return false;
  }
}

function chooseDeclared(declared: string, warn: EncodingWarn): string {
  const label = declared.trim().toLowerCase();
  // ASCII is a subset of UTF-8, and a page that says ASCII yet has other bytes is far more
  // likely UTF-8 than windows-1252 (which WHATWG maps "us-ascii" to).
  if (label === 'us-ascii' || label === 'ascii') return 'utf-8';
  let encoding: string;
  try {
    encoding = new TextDecoder(label).encoding;
  } catch {
    warn('encoding', `Unsupported encoding "${declared}" declared; decoded as UTF-8`);
    return 'utf-8';
  }
  if (encoding.startsWith('utf-16')) {
    warn(
      'encoding',
      `The document declares encoding "${declared}" but its bytes are not UTF-16; decoded as UTF-8`,
    );
    return 'utf-8';
  }
  return encoding;
}

/** The `encoding="..."` value of an XML declaration at the start of `text`, or `null`. */
export function declaredEncoding(text: string): string | null {
  const start = text.search(/\S/);
  if (start === -1 || !text.startsWith('<?xml', start)) return null;
  const close = text.indexOf('?>', start);
  const decl = close === -1 ? text.slice(start, start + PROLOG_BYTES) : text.slice(start, close);
  const match = /\sencoding\s*=\s*(["'])([A-Za-z][A-Za-z0-9._:-]*)\1/.exec(decl);
  return match === null ? null : match[2];
}

function isAsciiWhitespace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

function isAsciiMarkupStart(b: number): boolean {
  return b === 0x3c || isAsciiWhitespace(b);
}

function startsWithXmlDecl(bytes: Uint8Array, i: number): boolean {
  return (
    bytes[i] === 0x3c &&
    bytes[i + 1] === 0x3f &&
    bytes[i + 2] === 0x78 &&
    bytes[i + 3] === 0x6d &&
    bytes[i + 4] === 0x6c
  );
}

function indexOfDeclEnd(bytes: Uint8Array, from: number, to: number): number {
  for (let i = from; i + 1 < to; i++) {
    if (bytes[i] === 0x3f && bytes[i + 1] === 0x3e) return i + 2;
  }
  return -1;
}

function latin1(bytes: Uint8Array, from: number, to: number): string {
  let s = '';
  for (let i = from; i < to; i++) s += String.fromCharCode(bytes[i]);
  return s;
}
