/**
 * Gzip decompression on the platform's `DecompressionStream` (browsers, Workers, Node >= 18),
 * with a cap on the output: a few KB of gzip can expand to gigabytes.
 */

import { errorText, UspError } from '../contract/errors.js';

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
// error) small, and lets a consumer that stops early stop the work early. The platform
// decompressor expands a whole written slice before the reader can push back, and deflate can
// expand about 1,000 times, so a slice of 2 KiB holds at most about 2 MB of a bomb's output.
const INPUT_SLICE_BYTES = 2 * 1024;

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
  const ds = new DecompressionStream('gzip');
  // The platform types want an ArrayBuffer-backed view; any Uint8Array works at run time.
  const writer = ds.writable.getWriter() as WritableStreamDefaultWriter<Uint8Array>;
  const reader = ds.readable.getReader();
  let inputError: { error: unknown } | null = null;
  let stopped = false;

  const it = input[Symbol.asyncIterator]();
  let inputOver = false;

  const pump = (async () => {
    try {
      while (!stopped) {
        let next: IteratorResult<Uint8Array>;
        try {
          next = await it.next();
        } catch (error) {
          // Keep what decompressed so far: close the writer (flushes), report the input's error.
          inputOver = true;
          inputError = { error };
          break;
        }
        if (next.done) {
          inputOver = true;
          break;
        }
        const chunk = next.value;
        for (let i = 0; i < chunk.length && !stopped; i += INPUT_SLICE_BYTES) {
          await writer.write(
            chunk.length <= INPUT_SLICE_BYTES ? chunk : chunk.subarray(i, i + INPUT_SLICE_BYTES),
          );
        }
      }
      if (stopped) return;
      await writer.close();
    } catch {
      // The decompressor failed; the reader reports it.
    }
  })();

  try {
    yield* capGunzipOutput(reader, maxOutputBytes, async () => {
      await pump;
      return inputError;
    });
  } finally {
    stopped = true;
    // Release the input now, even if a read of it is still pending in the pump.
    if (!inputOver) {
      inputOver = true;
      it.return?.()?.catch(() => {});
    }
    reader.cancel().catch(() => {});
    writer.abort().catch(() => {});
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
      throw new GunzipError('USP_DECODING', `Gzip data is corrupt or cut off: ${errorText(error)}`, {
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
