/**
 * Gzip decompression on the platform's `DecompressionStream` (browsers, Workers, Node >= 18),
 * with a cap on the output: a few KB of gzip can expand to gigabytes.
 */

import { errorText, UspError } from '../contract/errors.js';
import { concatBytes } from './bytes.js';

/** Decompresses a gzip stream with an output cap; iteration throws once the cap is passed. */
export type Gunzip = (input: AsyncIterable<Uint8Array>, maxOutputBytes: number) => AsyncIterable<Uint8Array>;

/**
 * Thrown by a gunzip iteration. `code` says whether the data was bad (`USP_DECODING`) or the cap
 * was passed (`USP_TOO_LARGE`).
 */
export class GunzipError extends UspError {
  declare readonly code: 'USP_DECODING' | 'USP_TOO_LARGE';
  constructor(code: 'USP_DECODING' | 'USP_TOO_LARGE', message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'GunzipError';
  }
}

/**
 * Whether an error thrown while reading a body means "the size cap was passed": code
 * `USP_TOO_LARGE` (core's and the fetcher's errors), or `too-large` (the `WebErrorResponse` code,
 * which a custom web client may also put on the errors its bodies throw).
 */
export function isTooLargeError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  return code === 'USP_TOO_LARGE' || code === 'too-large';
}

// Feeding the decompressor small slices keeps the output it has ready (and would lose on an
// error) small, and lets a consumer that stops early stop the work early. A browser's
// decompressor expands a whole written slice before the reader can push back, and deflate can
// expand about 1,000 times (1,028 for 40 MB of spaces), so a slice of 8 KiB holds at most about
// 8 MB of a bomb's output. Each write costs a round of promises: on the bench's gzipped 50,000-URL
// urlset (Node 20, paired rounds) 8 KiB slices took 0.77-0.81 of 2 KiB's CPU, 4 KiB 0.84-0.85,
// 16 KiB 0.75-0.79 for twice the bound.
const INPUT_SLICE_BYTES = 8 * 1024;

/**
 * Decompresses a gzip stream (multi-member streams are concatenated). Yields at most
 * `maxOutputBytes` bytes, then throws `GunzipError('USP_TOO_LARGE')`. Corrupt or cut input throws
 * `GunzipError('USP_DECODING')` after yielding everything that decompressed before the damage. An error
 * thrown by the input itself is rethrown as is (so a reset connection stays a reset connection).
 */
export async function* gunzip(
  input: AsyncIterable<Uint8Array>,
  maxOutputBytes: number,
): AsyncGenerator<Uint8Array, void, undefined> {
  const members = new GzipMembers(input[Symbol.asyncIterator]());
  try {
    yield* capGunzipOutput(members, maxOutputBytes, () => members.inputSide());
  } finally {
    members.stop();
  }
}

// Bytes of input kept after they were written: the end of a member and the start of the next
// lie in the write that failed or the one before it (each at most a slice), and the member's
// length field is in the 4 bytes before its end.
const KEPT_INPUT_BYTES = 2 * INPUT_SLICE_BYTES + 8;
const MIN_MEMBER_BYTES = 18;

/**
 * One `DecompressionStream` per gzip member. Node 20 and 22 read on after a member's end; Node 24
 * and browsers (as the Compression Streams spec says) fail with "trailing junk" there. Then the
 * next member starts where a gzip header follows 4 bytes holding this member's output length
 * (its trailer's ISIZE), and decompression goes on from there in a new stream. The output is
 * read as soon as it is ready, into a queue of our own: a failing stream drops the chunks it
 * still holds, and a complete member's output is what proves where it ended.
 */
class GzipMembers {
  readonly #input: AsyncIterator<Uint8Array>;
  #inputOver = false;
  #inputError: { error: unknown } | null = null;
  #stopped = false;
  /** Input read but not yet written: the start of the next member, after a restart. */
  #carry: Uint8Array[] = [];
  /** The last bytes written to the current member's stream, oldest first. */
  #written: Uint8Array[] = [];
  #writtenBytes = 0;
  #memberIn = 0;
  #memberOut = 0;
  #queue: Uint8Array[] = [];
  #ended = false;
  #failure: { error: unknown } | null = null;
  #waiters: (() => void)[] = [];
  #writer!: WritableStreamDefaultWriter<Uint8Array>;
  #reader!: ReadableStreamDefaultReader<Uint8Array>;
  #pump: Promise<void> = Promise.resolve();

  constructor(input: AsyncIterator<Uint8Array>) {
    this.#input = input;
    this.#start();
  }

  #start(): void {
    const ds = new DecompressionStream('gzip');
    // The platform types want an ArrayBuffer-backed view; any Uint8Array works at run time.
    this.#writer = ds.writable.getWriter() as WritableStreamDefaultWriter<Uint8Array>;
    this.#reader = ds.readable.getReader();
    this.#written = [];
    this.#writtenBytes = 0;
    this.#memberIn = 0;
    this.#memberOut = 0;
    this.#ended = false;
    this.#failure = null;
    void this.#drain(this.#reader);
    this.#pump = this.#feed(this.#writer);
  }

  #notify(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  #changed(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  async #drain(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    try {
      while (true) {
        const { done, value } = await reader.read();
        if (reader !== this.#reader) return;
        if (done) break;
        this.#memberOut += value.length;
        this.#queue.push(value);
        this.#notify();
      }
      this.#ended = true;
    } catch (error) {
      if (reader !== this.#reader) return;
      this.#failure = { error };
    }
    this.#notify();
  }

  async #next(): Promise<Uint8Array | null> {
    if (this.#carry.length > 0) return this.#carry.shift() as Uint8Array;
    if (this.#inputOver) return null;
    try {
      const next = await this.#input.next();
      if (!next.done) return next.value;
    } catch (error) {
      // Keep what decompressed so far: close the writer (flushes), report the input's error.
      this.#inputError = { error };
    }
    this.#inputOver = true;
    return null;
  }

  async #feed(writer: WritableStreamDefaultWriter<Uint8Array>): Promise<void> {
    // The part of the current chunk not written yet: the next member's, if this one ends.
    let unwritten: Uint8Array | null = null;
    try {
      while (true) {
        const chunk = await this.#next();
        if (chunk === null) break;
        unwritten = chunk;
        while (unwritten.length > 0) {
          // Write once the reader has handed on the last output: at most one slice's output waits.
          while (this.#queue.length > 0 && !this.#stopped && this.#failure === null) await this.#changed();
          if (this.#stopped || this.#failure !== null) return;
          const slice =
            unwritten.length <= INPUT_SLICE_BYTES ? unwritten : unwritten.subarray(0, INPUT_SLICE_BYTES);
          unwritten = unwritten.subarray(slice.length);
          this.#keep(slice);
          await writer.write(slice);
        }
      }
      if (!this.#stopped) await writer.close();
    } catch {
      // The decompressor failed; the reader reports it.
    } finally {
      if (unwritten !== null && unwritten.length > 0) this.#carry.unshift(unwritten);
    }
  }

  #keep(slice: Uint8Array): void {
    this.#memberIn += slice.length;
    this.#written.push(slice);
    this.#writtenBytes += slice.length;
    while (this.#writtenBytes - (this.#written[0] as Uint8Array).length >= KEPT_INPUT_BYTES) {
      this.#writtenBytes -= (this.#written.shift() as Uint8Array).length;
    }
  }

  /** The bytes written after this member's end, when they start another member; else null. */
  #nextMember(): Uint8Array[] | null {
    const kept = concatBytes(this.#written, this.#writtenBytes);
    const size = this.#memberOut >>> 0;
    const view = new DataView(kept.buffer);
    // A member is at least 18 bytes (10 of header, 8 of trailer) and its end is written.
    const first = Math.max(4, MIN_MEMBER_BYTES - (this.#memberIn - kept.length));
    for (let end = first; end < kept.length; end++) {
      if (
        kept[end] === 0x1f &&
        (end + 1 === kept.length || kept[end + 1] === 0x8b) &&
        view.getUint32(end - 4, true) === size
      ) {
        return [kept.subarray(end)];
      }
    }
    return null;
  }

  async read(): Promise<{ done?: boolean; value?: Uint8Array }> {
    while (true) {
      const value = this.#queue.shift();
      if (value !== undefined) {
        if (this.#queue.length === 0) this.#notify();
        return { value };
      }
      if (this.#ended) return { done: true };
      const failure = this.#failure;
      if (failure !== null) {
        await this.#pump;
        const rest = this.#inputError === null ? this.#nextMember() : null;
        if (rest === null) throw failure.error;
        this.#carry = [...rest, ...this.#carry];
        this.#start();
        continue;
      }
      await this.#changed();
    }
  }

  async inputSide(): Promise<{ error: unknown } | null> {
    await this.#pump;
    return this.#inputError;
  }

  stop(): void {
    this.#stopped = true;
    this.#notify();
    // Release the input now, even if a read of it is still pending in the pump.
    if (!this.#inputOver) {
      this.#inputOver = true;
      this.#input.return?.()?.catch(() => {});
    }
    this.#reader.cancel().catch(() => {});
    this.#writer.abort().catch(() => {});
  }
}

/**
 * What every gunzip does with its decompressor's output, for a {@link Gunzip} of your own: yields
 * it up to `maxOutputBytes` (then throws `GunzipError('USP_TOO_LARGE')`), and turns a decompressor
 * failure into `GunzipError('USP_DECODING')`, unless the input itself failed: `inputSide` waits for the
 * input side to finish and gives the input's own error, which is rethrown as is.
 */
export async function* capGunzipOutput(
  output: { read(): Promise<{ done?: boolean; value?: Uint8Array }> },
  maxOutputBytes: number,
  inputSide: () => Promise<{ error: unknown } | null>,
): AsyncGenerator<Uint8Array, void, undefined> {
  let produced = 0;
  while (true) {
    let result: { done?: boolean; value?: Uint8Array };
    try {
      result = await output.read();
    } catch (error) {
      const failed = await inputSide();
      if (failed !== null) throw failed.error;
      throw new GunzipError('USP_DECODING', `Gzip data is corrupt or cut off: ${decompressorText(error)}`, {
        cause: error,
      });
    }
    if (result.done || result.value === undefined) break;
    const chunk = result.value;
    if (produced + chunk.length > maxOutputBytes) {
      const room = maxOutputBytes - produced;
      if (room > 0) yield chunk.subarray(0, room);
      throw new GunzipError('USP_TOO_LARGE', `Gunzipped data exceeds the maximum of ${maxOutputBytes} bytes`);
    }
    produced += chunk.length;
    yield chunk;
  }
  const failed = await inputSide();
  if (failed !== null) throw failed.error;
}

/** What went wrong, in zlib's words: Node 24's DecompressionStream wraps zlib's error in a TypeError without a message. */
function decompressorText(error: unknown): string {
  const text = errorText(error);
  if (text !== '' || !(error instanceof Error) || error.cause === undefined) return text;
  return errorText(error.cause);
}
