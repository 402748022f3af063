/**
 * What a body is: gzip by its magic bytes (never by name or Content-Type, which lie both ways),
 * XML or text by its first non-whitespace character (after any BOM and any amount of whitespace).
 */

import { concatBytes } from './bytes.js';
import type { Gunzip } from './gunzip.js';

/** Whether the bytes start with the gzip magic number `1f 8b`. */
export function hasGzipMagic(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

export interface UnwrapGzipOptions {
  gunzip: Gunzip;
  /** Output cap of every layer. */
  maxOutputBytes: number;
  /** Gzip inside gzip is unwrapped this many layers deep at most (default 3). */
  maxLayers?: number;
  /** Called when a gzip layer is found (1 for the outer one). */
  onLayer?: (layer: number) => void;
}

/**
 * Unwraps gzip layers while the stream starts with the gzip magic, up to `maxLayers`; returns
 * the stream unchanged when it is not gzipped. Errors of the input and of the decompressor
 * (`GunzipError`) surface through the returned iteration.
 */
export async function* unwrapGzip(
  input: AsyncIterable<Uint8Array>,
  options: UnwrapGzipOptions,
): AsyncGenerator<Uint8Array, void, undefined> {
  const maxLayers = options.maxLayers ?? 3;
  let source: AsyncIterable<Uint8Array> = input;
  for (let layer = 1; ; layer++) {
    const peeked = await peekBytes(source, 2);
    if (layer > maxLayers || !hasGzipMagic(peeked.head)) {
      yield* peeked.stream;
      return;
    }
    options.onLayer?.(layer);
    source = options.gunzip(peeked.stream, options.maxOutputBytes);
  }
}

export interface Peeked {
  /** The first bytes (at least `n` unless the stream is shorter). */
  readonly head: Uint8Array;
  /** The whole stream again, head included. */
  readonly stream: AsyncIterable<Uint8Array>;
}

/**
 * Reads until at least `n` bytes are in hand, and gives them back with a stream that replays
 * them. An error while peeking is replayed by the stream, after the bytes read before it.
 */
export async function peekBytes(input: AsyncIterable<Uint8Array>, n: number): Promise<Peeked> {
  const it = input[Symbol.asyncIterator]();
  const chunks: Uint8Array[] = [];
  let have = 0;
  let done = false;
  let failure: { error: unknown } | null = null;
  while (have < n) {
    let next: IteratorResult<Uint8Array>;
    try {
      next = await it.next();
    } catch (error) {
      failure = { error };
      break;
    }
    if (next.done) {
      done = true;
      break;
    }
    if (next.value.length === 0) continue;
    chunks.push(next.value);
    have += next.value.length;
  }
  const head = chunks.length === 1 ? chunks[0] : concatBytes(chunks, have);
  async function* replay(): AsyncGenerator<Uint8Array, void, undefined> {
    let finished = false;
    try {
      for (const chunk of chunks) yield chunk;
      if (failure !== null) throw failure.error;
      if (!done) {
        while (true) {
          const next = await it.next();
          if (next.done) break;
          yield next.value;
        }
      }
      finished = true;
    } finally {
      // A consumer that stops early releases the underlying body.
      if (!finished && failure === null && !done) it.return?.()?.catch(() => {});
    }
  }
  return { head, stream: replay() };
}

/**
 * Whitespace skipped before deciding XML vs text: XML's four, the rest of Unicode's, the BOM
 * character and the separators Python's `str.strip()` also removes.
 */
export function isSniffWhitespace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d) || (code >= 0x1c && code <= 0x1f);
  if (code < 0x85) return false;
  return (
    code === 0x85 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** Index of the first character that is not sniff whitespace, or -1 when there is none. */
export function firstNonWhitespace(text: string, from = 0): number {
  for (let i = from; i < text.length; i++) {
    if (!isSniffWhitespace(text.charCodeAt(i))) return i;
  }
  return -1;
}

/**
 * `'xml'` when the first non-whitespace character is `<`, `'text'` when it is anything else,
 * `null` while the text seen so far is all whitespace (undecided).
 */
export function sniffMarkup(text: string): 'xml' | 'text' | null {
  const i = firstNonWhitespace(text);
  if (i === -1) return null;
  return text.charCodeAt(i) === 0x3c ? 'xml' : 'text';
}
