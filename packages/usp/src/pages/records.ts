// The temp-file page store's records. An ordinary page (the sitemaps.org fields only) is a
// fixed 28-byte head and its URL's bytes: no number is turned into text and back, which a JSON
// line per page cost (encoding and decoding were a sixth of the main thread's time in `usp ls`).
// Any other page is its JSON line (`encodePage`) behind a length.
import { closeSync, openSync, readSync } from 'node:fs';
import { CHANGE_FREQUENCIES, type ChangeFrequency, type Page, SitemapDate } from '@usp-ts/core/parse';

const PLAIN = 1;
const JSON_LINE = 2;
const HEAD_BYTES = 28;
const JSON_HEAD_BYTES = 5;
const NO_DATE = 0;
const ZONED = 1;
const ZONELESS = 2;
const FREQ_INDEX = new Map<string, number>(CHANGE_FREQUENCIES.map((f, i) => [f, i + 1]));

/** Whether a date fits the plain record exactly (an offset in int16, microseconds in uint16). */
function plainDate(d: SitemapDate): boolean {
  const off = d.offsetMinutes;
  const us = d.microseconds;
  return (
    typeof d.epochMs === 'number' &&
    (off === null || (Number.isInteger(off) && off >= -32_768 && off <= 32_767)) &&
    Number.isInteger(us) &&
    us >= 0 &&
    us <= 65_535
  );
}

/** Pages appended as records to a buffer that grows as needed; `take()` hands the bytes over. */
export class RecordBuffer {
  #buf: Buffer;
  /**
   * The numbers of a record are written through a view of `#buf`: the optimising compiler makes
   * them single stores, where Buffer's `writeDoubleLE` and the like are JavaScript functions it
   * compiles on its own, in each thread (about 7 % of a small site's optimising work).
   */
  #view: DataView;
  #size = 0;

  constructor(initialBytes: number) {
    this.#buf = Buffer.allocUnsafe(Math.max(initialBytes, 256));
    this.#view = viewOf(this.#buf);
  }

  get size(): number {
    return this.#size;
  }

  #room(bytes: number): void {
    if (this.#size + bytes <= this.#buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#size + bytes));
    this.#buf.copy(bigger, 0, 0, this.#size);
    this.#buf = bigger;
    this.#view = viewOf(bigger);
  }

  append(page: Page, encodeJson: (page: Page) => string): void {
    if (this.appendPlain(page)) return;
    const line = encodeJson(page);
    this.#room(JSON_HEAD_BYTES + line.length * 3);
    const at = this.#size;
    const n = this.#buf.write(line, at + JSON_HEAD_BYTES, 'utf8');
    this.#buf[at] = JSON_LINE;
    this.#view.setUint32(at + 1, n, true);
    this.#size = at + JSON_HEAD_BYTES + n;
  }

  /** Records made elsewhere (a parse worker's batch, see codec.ts), whole ones only. */
  appendRecords(records: Uint8Array): void {
    this.#room(records.length);
    this.#buf.set(records, this.#size);
    this.#size += records.length;
  }

  /** Appends `page` as a plain record if it is one; false (nothing written) if not. */
  appendPlain(page: Page): boolean {
    const url = page.url;
    const d = page.lastModified;
    const cf = page.changeFrequency;
    const freq = cf === null ? 0 : (FREQ_INDEX.get(cf) ?? -1);
    if (
      page.newsStory !== null ||
      page.images !== null ||
      page.alternates !== null ||
      page.extensions !== undefined ||
      typeof url !== 'string' ||
      typeof page.priority !== 'number' ||
      freq < 0 ||
      (d !== null && !plainDate(d))
    ) {
      return false;
    }
    this.#room(HEAD_BYTES + url.length * 3);
    const b = this.#buf;
    const v = this.#view;
    const at = this.#size;
    const n = b.write(url, at + HEAD_BYTES, 'utf8');
    // UTF-8 cannot hold a lone surrogate (it would come back as U+FFFD); JSON escapes it.
    if (n !== url.length && !(url as string & { isWellFormed(): boolean }).isWellFormed()) return false;
    b[at] = PLAIN;
    b[at + 1] = freq;
    b[at + 2] = d === null ? NO_DATE : d.offsetMinutes === null ? ZONELESS : ZONED;
    // One byte a character: read back as latin1, which makes the string without a UTF-8 pass.
    b[at + 3] = n === url.length ? 1 : 0;
    v.setUint32(at + 4, n, true);
    v.setFloat64(at + 8, page.priority, true);
    if (d !== null) {
      v.setFloat64(at + 16, d.epochMs, true);
      v.setInt16(at + 24, d.offsetMinutes ?? 0, true);
      v.setUint16(at + 26, d.microseconds, true);
    } else {
      // Not left as whatever the reused buffer held: a record's bytes depend on its page only.
      b.fill(0, at + 16, at + HEAD_BYTES);
    }
    this.#size = at + HEAD_BYTES + n;
    return true;
  }

  /** The bytes appended since the last `take()`; valid until the next `append()`. */
  take(): Buffer {
    const out = this.#buf.subarray(0, this.#size);
    this.#size = 0;
    return out;
  }
}

function viewOf(b: Buffer): DataView {
  return new DataView(b.buffer, b.byteOffset, b.length);
}

/** The record at `at` if `end` holds all of it, else how many bytes it needs (a negative number). */
function recordLength(b: Buffer, at: number, end: number): number {
  const kind = b[at];
  const head = kind === PLAIN ? HEAD_BYTES : JSON_HEAD_BYTES;
  if (end - at < head) return -head;
  const length = head + b.readUInt32LE(at + (kind === PLAIN ? 4 : 1));
  return end - at < length ? -length : length;
}

function decodeRecord(b: Buffer, at: number, length: number, decodeJson: (line: string) => Page): Page {
  if (b[at] === JSON_LINE) return decodeJson(b.toString('utf8', at + JSON_HEAD_BYTES, at + length));
  return decodePlain(b, at, length);
}

/** The plain record at `at`, `length` bytes long (as `recordLength` gives it). */
export function decodePlain(b: Buffer, at: number, length: number): Page {
  const freq = b[at + 1];
  const dateKind = b[at + 2];
  const urlEnd = at + length;
  return {
    url: b.toString(b[at + 3] === 1 ? 'latin1' : 'utf8', at + HEAD_BYTES, urlEnd),
    priority: b.readDoubleLE(at + 8),
    lastModified:
      dateKind === NO_DATE
        ? null
        : new SitemapDate(
            b.readDoubleLE(at + 16),
            dateKind === ZONELESS ? null : b.readInt16LE(at + 24),
            b.readUInt16LE(at + 26),
          ),
    changeFrequency: freq === 0 ? null : (CHANGE_FREQUENCIES[freq - 1] as ChangeFrequency),
    newsStory: null,
    images: null,
    alternates: null,
  };
}

/** The length of the plain record at `at` (one `appendPlain` wrote), head included. */
export function plainRecordLength(b: Buffer, at: number): number {
  return HEAD_BYTES + b.readUInt32LE(at + 4);
}

/** The bytes `buf[0, end)` hold whole records only; valid until the next one is asked for. */
interface Region {
  buf: Buffer;
  end: number;
}

/**
 * A record file `chunkBytes` at a time (a record longer than that is read whole), cut after its
 * last whole record: memory stays bounded however many pages the file holds.
 */
function* regions(
  path: string,
  chunkBytes: number,
  reuse: LineBuffers | null = null,
): Generator<Region, void, undefined> {
  const fd = openSync(path, 'r');
  try {
    const kept = reuse?.read ?? null;
    const region: Region = {
      buf: kept !== null && kept.length >= chunkBytes ? kept : Buffer.allocUnsafe(chunkBytes),
      end: 0,
    };
    if (reuse !== null) reuse.read = region.buf;
    let filled = 0;
    for (;;) {
      let buf = region.buf;
      const n = readSync(fd, buf, filled, buf.length - filled, null);
      filled += n;
      let at = 0;
      let need = 0;
      while (at < filled) {
        const length = recordLength(buf, at, filled);
        if (length < 0) {
          need = -length;
          break;
        }
        at += length;
      }
      if (at > 0) {
        region.end = at;
        yield region;
      }
      // A cut record at the end of a file is not a page: stop there.
      if (n === 0) return;
      buf.copy(buf, 0, at, filled);
      filled -= at;
      if (need > buf.length) {
        buf = Buffer.allocUnsafe(Math.max(need, buf.length * 2));
        region.buf.copy(buf, 0, 0, filled);
        region.buf = buf;
        if (reuse !== null) reuse.read = buf;
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** The pages of a record file, read a bounded chunk at a time. */
export function* readRecords(
  path: string,
  chunkBytes: number,
  decodeJson: (line: string) => Page,
): Generator<Page, void, undefined> {
  for (const { buf, end } of regions(path, chunkBytes)) {
    for (let at = 0; at < end; ) {
      const length = recordLength(buf, at, end);
      yield decodeRecord(buf, at, length, decodeJson);
      at += length;
    }
  }
}

/**
 * Buffers `urlLines` hands from one file to the next of a print (the read buffer, and the line
 * buffer once its consumer said it is written out), kept on the caller's `UrlLinesOptions.scratch`
 * object: a new pair a file was garbage that V8 frees late, since little else is allocated while
 * printing (1M-URL site, one thread: peak RSS 131-145 MiB with a pair a file, 125-129 MiB with
 * one pair a print, under load). One print at a time.
 */
export interface LineBuffers {
  read?: Buffer | null;
  spare?: Buffer | null;
}

/**
 * The pages of a record file as lines of URLs, bytes ready to write (`next(true)`: the last chunk
 * is written out and its buffer may be reused): `indent` before each URL,
 * `stripPrefix` taken off as `--strip-url` does (then a `/` first if the rest lacks one). For
 * tabtree, which prints only URLs: no page object and no string is made for an ordinary page.
 * `stripPrefix` must be ASCII.
 */
export function* urlLines(
  path: string,
  chunkBytes: number,
  decodeJson: (line: string) => Page,
  indent: string,
  stripPrefix: string,
  buffers: LineBuffers = {},
): Generator<Buffer, void, boolean | undefined> {
  const pre = Buffer.from(indent);
  const prefix = Buffer.from(stripPrefix, 'latin1');
  for (const { buf, end } of regions(path, chunkBytes, buffers)) {
    const spare = buffers.spare ?? null;
    let out: Buffer =
      spare !== null && spare.length >= end + 1024
        ? spare
        : Buffer.allocUnsafe(Math.max(end, chunkBytes) + 1024);
    buffers.spare = null;
    let size = 0;
    for (let at = 0; at < end; ) {
      const kind = buf[at];
      let length: number;
      let src = buf;
      let from: number;
      let to: number;
      if (kind === PLAIN) {
        length = HEAD_BYTES + buf.readUInt32LE(at + 4);
        from = at + HEAD_BYTES;
        to = at + length;
      } else {
        length = JSON_HEAD_BYTES + buf.readUInt32LE(at + 1);
        src = Buffer.from(decodeJson(buf.toString('utf8', at + JSON_HEAD_BYTES, at + length)).url);
        from = 0;
        to = src.length;
      }
      at += length;
      if (size + pre.length + (to - from) + 2 > out.length) {
        const bigger = Buffer.allocUnsafe((size + pre.length + (to - from) + 2) * 2);
        out.copy(bigger, 0, 0, size);
        out = bigger;
      }
      size = copyBytes(pre, 0, pre.length, out, size);
      if (prefix.length > 0) {
        if (
          to - from >= prefix.length &&
          src.compare(prefix, 0, prefix.length, from, from + prefix.length) === 0
        ) {
          from += prefix.length;
        }
        if (from === to || src[from] !== 0x2f) out[size++] = 0x2f;
      }
      size = copyBytes(src, from, to, out, size);
      out[size++] = 0x0a;
    }
    // A consumer that says it is done with the bytes (written out, not held by a stream) gets the
    // same buffer again: a fresh 256 KiB a chunk is garbage the young generation never sees, and
    // it piled up to ~15 MiB of RSS before a collection.
    if ((yield out.subarray(0, size)) === true) buffers.spare = out;
  }
}

/**
 * `src[from, to)` into `out` at `at`; the end. A URL is a few dozen bytes, which a loop copies
 * in less time than `Buffer#copy` takes to be called (the tabtree print: 0.4 -> 0.2 µs a line).
 */
function copyBytes(src: Buffer, from: number, to: number, out: Buffer, at: number): number {
  if (to - from > 256) return at + src.copy(out, at, from, to);
  let o = at;
  for (let i = from; i < to; i++) out[o++] = src[i];
  return o;
}

/**
 * The name of these records as an `EncodedPages` format: a parse worker's batch of ordinary
 * pages comes with its records (see codec.ts), and the temp-file store copies them instead of
 * encoding each page again on the main thread.
 */
export const PAGE_RECORDS_FORMAT = 'usp-page-records/1';

/**
 * The pages of a parse worker's batch that arrived as their plain records only (`n` of them, see
 * codec.ts's `encodeRecords`), for a consumer that stores the records (the temp-file store):
 * a page object is made only if something reads the pages themselves (a walk's `maxPages` cut
 * slices the batch), then all of them at once. The length and the records are read without it.
 */
export function recordPages(n: number, records: Uint8Array): Page[] {
  const target = new Array<Page>(n);
  let made = false;
  const make = () => {
    made = true;
    const b = Buffer.from(records.buffer, records.byteOffset, records.byteLength);
    for (let i = 0, at = 0; i < n; i++) {
      const length = plainRecordLength(b, at);
      target[i] = decodePlain(b, at, length);
      at += length;
    }
  };
  const lazy = (key: string | symbol) => !made && key !== 'length';
  return new Proxy(target, {
    get(t, key, receiver) {
      if (lazy(key)) make();
      return Reflect.get(t, key, receiver);
    },
    has(t, key) {
      if (lazy(key)) make();
      return Reflect.has(t, key);
    },
    getOwnPropertyDescriptor(t, key) {
      if (lazy(key)) make();
      return Reflect.getOwnPropertyDescriptor(t, key);
    },
    ownKeys(t) {
      if (!made) make();
      return Reflect.ownKeys(t);
    },
  });
}
