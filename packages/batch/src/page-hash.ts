import { hash } from 'node:crypto';
import { mix32 } from '@usp-ts/core/engine';

// The hashes of a page digest (`page-digest.ts`): 8 bytes of its URL (the key) and 8 of its row,
// each as two 32-bit lanes. Layout 3 takes them from the JS hashes below; layouts 1 and 2 from SHA-1
// (`crypto.hash` cost ~280 ns a call, nearly all of it the call's fixed cost: two a page were the
// largest single item of a fresh batch run).
//
// Collisions. A 64-bit hash, cryptographic or not, only ever hides something on a collision: two
// URLs of one sitemap with the same URL hash are taken for one page (the second compared with the
// first's row, a removed one not named), and a changed row with the hash of its last text is
// marked `unchanged`. For unrelated texts that is ~2⁻⁶⁴ a comparison. Layouts 1 and 2 kept the
// first 8 bytes of SHA-1, which a hostile site could already collide by brute force (2³² tries);
// a site can collide this hash with less work. Either way the site can only blur the change marks
// of its own pages (which it could change at will anyway): no other site's rows, no crash, no
// extra work. The tables that look the hashes up (`DigestTable`) place them by a seed drawn for
// the process, so crafted hashes cannot pile into one probe chain.

/** The last hash made: its two lanes (no object a page). */
export const LANES = new Int32Array(2);

const F64 = new Float64Array(1);
const F64_WORDS = new Int32Array(F64.buffer);

// Each lane is a bijection of itself and the next 32-bit word (two UTF-16 code units: multiply by
// an odd constant, then a xorshift that brings the high bits down), with its own constants; the
// lanes are mixed together at the end. Two inputs of one length that differ in a single word
// always differ in both lanes before the end. Written out in each function (locals, no calls in
// the loops): this runs twice a page.
const KA = 0x9e3779b1;
const KB = 0x5bd1e995;

/** Ends a hash of the lanes (a, b) and `n` into `LANES`. */
function finish(a: number, b: number, n: number): void {
  const x = mix32(a ^ n);
  LANES[0] = x;
  LANES[1] = mix32((b ^ Math.imul(n, 0x27d4eb2d)) + x);
}

/** The lanes (a, b) run over `s`'s code units, two a word, the last alone when the length is odd. */
function run(s: string, a: number, b: number): void {
  const n = s.length;
  let i = 0;
  for (; i + 1 < n; i += 2) {
    const c = s.charCodeAt(i) | (s.charCodeAt(i + 1) << 16);
    a = Math.imul(a ^ c, KA);
    a ^= a >>> 15;
    b = Math.imul(b ^ c, KB);
    b ^= b >>> 13;
  }
  if (i < n) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, KA);
    a ^= a >>> 15;
    b = Math.imul(b ^ c, KB);
    b ^= b >>> 13;
  }
  finish(a, b, n);
}

/** A 64-bit hash of `s`'s UTF-16 code units into `LANES` (layout 3's URL key). */
export function urlHash(s: string): void {
  run(s, 0x2545f491, 0x6a09e667);
}

/** Layout 3's row hash of a row known only by its JSON text, into `LANES`. */
export function textRowHash(s: string): void {
  run(s, 0x3c6ef372, 0x510e527f);
}

/**
 * Layout 3's row hash of a plain page (`plainPageDate` gave its date), into `LANES`: its row's
 * text is `plainPageFields`, fixed by its URL (the key) and these three, so they are hashed
 * instead of the ~130 characters they make. The words are decodable (the priority's two, then
 * each string's length, -1 for `null`, and its units), so two rows of one URL that differ in text
 * differ here. The priority goes in as the row writes it: a finite number by its bits (-0 as 0:
 * both write `0`; other distinct numbers write distinct texts), any other as one pair (`null`).
 * Other starting lanes than `textRowHash`'s: a page that stops or starts being plain is compared
 * across the two only by chance.
 */
export function plainRowHash(
  priority: number,
  lastModified: string | null,
  changeFrequency: string | null,
): void {
  let a = 0x1f83d9ab;
  let b = 0x5be0cd19;
  let w0 = 0;
  let w1 = 0x7ff80000; // a NaN's high word: no finite number's bits
  if (Number.isFinite(priority)) {
    F64[0] = priority + 0;
    w0 = F64_WORDS[0] as number;
    w1 = F64_WORDS[1] as number;
  }
  a = Math.imul(a ^ w0, KA);
  a ^= a >>> 15;
  b = Math.imul(b ^ w0, KB);
  b ^= b >>> 13;
  a = Math.imul(a ^ w1, KA);
  a ^= a >>> 15;
  b = Math.imul(b ^ w1, KB);
  b ^= b >>> 13;
  for (let f = 0; f < 2; f++) {
    const s = f === 0 ? lastModified : changeFrequency;
    const n = s === null ? -1 : s.length;
    a = Math.imul(a ^ n, KA);
    a ^= a >>> 15;
    b = Math.imul(b ^ n, KB);
    b ^= b >>> 13;
    if (s === null) continue;
    let i = 0;
    for (; i + 1 < n; i += 2) {
      const c = s.charCodeAt(i) | (s.charCodeAt(i + 1) << 16);
      a = Math.imul(a ^ c, KA);
      a ^= a >>> 15;
      b = Math.imul(b ^ c, KB);
      b ^= b >>> 13;
    }
    if (i < n) {
      const c = s.charCodeAt(i);
      a = Math.imul(a ^ c, KA);
      a ^= a >>> 15;
      b = Math.imul(b ^ c, KB);
      b ^= b >>> 13;
    }
  }
  finish(a, b, 0);
}

/** The first 8 bytes of SHA-1 of `s` (UTF-8) into `LANES` (layouts 1 and 2), as little-endian lanes. */
export function sha1Hash(s: string): void {
  const h = hash('sha1', s, 'buffer');
  LANES[0] = h.readInt32LE(0);
  LANES[1] = h.readInt32LE(4);
}

/** Whether this platform stores an Int32Array's words little-endian (the digests' byte order). */
export const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** The process's seed for placing hashes in `DigestTable`s (never stored). */
const SEED = (Math.random() * 0x1_0000_0000) | 0;

/**
 * The entries of a stored digest (16 bytes a page: URL hash, row hash) as an open-addressing
 * table by URL hash: no string a page to build or to look up. Records which entries' URLs were
 * seen this run (the pages gone are the rest). A URL hash found twice keeps the later row hash,
 * as a Map would.
 */
export class DigestTable {
  /** The entries' words (4 a page: URL lanes, row lanes). */
  readonly #words: Int32Array;
  /** Each slot's entry + 1 (0: empty). */
  readonly #slots: Int32Array;
  readonly #seen: Uint8Array;
  readonly #mask: number;

  constructor(entries: Uint8Array) {
    const n = entries.length >>> 4;
    const words = new Int32Array(n * 4);
    new Uint8Array(words.buffer).set(entries.subarray(0, n * 16));
    if (!LITTLE_ENDIAN) Buffer.from(words.buffer).swap32();
    this.#words = words;
    let size = 16;
    while (size < n * 2) size *= 2;
    this.#mask = size - 1;
    this.#slots = new Int32Array(size);
    this.#seen = new Uint8Array(size);
    for (let i = 0; i < n; i++) {
      const slot = this.#place(words[i * 4] as number, words[i * 4 + 1] as number);
      this.#slots[slot] = i + 1;
    }
  }

  /** The slot of URL hash (a, b): the one holding it, or the empty one it would go to. */
  #place(a: number, b: number): number {
    const words = this.#words;
    const slots = this.#slots;
    const mask = this.#mask;
    let slot = mix32(Math.imul(a ^ SEED, 0x9e3779b1) + b) & mask;
    for (;;) {
      const e = slots[slot] as number;
      if (e === 0) return slot;
      const k = (e - 1) * 4;
      if (words[k] === a && words[k + 1] === b) return slot;
      slot = (slot + 1) & mask;
    }
  }

  /**
   * Looks up the page of URL hash (a, b), marks it seen, and compares its row hash (c, d):
   * 0 not there, 1 the same row, 2 another row.
   */
  compare(a: number, b: number, c: number, d: number): 0 | 1 | 2 {
    const slot = this.#place(a, b);
    const e = this.#slots[slot] as number;
    if (e === 0) return 0;
    this.#seen[slot] = 1;
    const k = (e - 1) * 4;
    return this.#words[k + 2] === c && this.#words[k + 3] === d ? 1 : 2;
  }

  /** The entries (ascending) whose URL hash was not seen by `compare`. */
  unseen(): number[] {
    const out: number[] = [];
    const words = this.#words;
    for (let i = 0; i * 4 < words.length; i++) {
      if (this.#seen[this.#place(words[i * 4] as number, words[i * 4 + 1] as number)] !== 1) out.push(i);
    }
    return out;
  }
}

/** The entries of a digest being made: 4 words a page (URL lanes, row lanes), grown by doubling. */
export class EntryWords {
  #words = new Int32Array(64);
  #length = 0;

  /** Adds a page's URL hash (a, b) and row hash (c, d). */
  push(a: number, b: number, c: number, d: number): void {
    let words = this.#words;
    const at = this.#length;
    if (at + 4 > words.length) {
      const grown = new Int32Array(Math.max(64, words.length * 2));
      grown.set(words);
      this.#words = grown;
      words = grown;
    }
    words[at] = a;
    words[at + 1] = b;
    words[at + 2] = c;
    words[at + 3] = d;
    this.#length = at + 4;
  }

  /** The entries as bytes (16 a page, lanes little-endian): a view, valid until the next push. */
  bytes(): Buffer {
    const view = Buffer.from(this.#words.buffer, 0, this.#length * 4);
    return LITTLE_ENDIAN ? view : Buffer.from(view).swap32();
  }

  /** Lets the words go (a closed document's digest is made). */
  clear(): void {
    this.#words = new Int32Array(0);
    this.#length = 0;
  }
}
