// Gzip on node:zlib, for the Node entry points (walks, one-off parses, the parser worker).
import { createGunzip } from 'node:zlib';
import { capGunzipOutput } from '@usp-ts/core/engine';

/**
 * Node's streaming gunzip with large output chunks: at zlib's default 16 KiB it runs at a third
 * of the speed. Same contract as core's `gunzip` (a cap on the output; corrupt or cut data throws
 * `GunzipError('USP_DECODING')` after yielding what decompressed; the input's own error is rethrown as is).
 */
export async function* nodeGunzip(
  input: AsyncIterable<Uint8Array>,
  maxOutputBytes: number,
  chunkBytes = 64 * 1024,
): AsyncGenerator<Uint8Array, void, undefined> {
  const gz = createGunzip({ chunkSize: chunkBytes });
  const it = input[Symbol.asyncIterator]();
  let inputError: { error: unknown } | null = null;
  let stopped = false;
  const feed = (async () => {
    try {
      while (!stopped && !gz.destroyed) {
        let next: IteratorResult<Uint8Array>;
        try {
          next = await it.next();
        } catch (error) {
          inputError = { error };
          break;
        }
        if (next.done || stopped || gz.destroyed) break;
        if (!gz.write(next.value)) {
          await new Promise<void>((resolve) => {
            const done = () => {
              gz.off('drain', done);
              gz.off('close', done);
              resolve();
            };
            gz.on('drain', done);
            gz.on('close', done);
          });
        }
      }
      if (stopped) await it.return?.();
    } catch {
      // The input's return() failed while stopping: nothing left to report to.
    } finally {
      // Ending flushes what the input gave; a cut stream then fails as "unexpected end of file".
      if (!gz.destroyed) gz.end();
    }
  })();

  const out = gz[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  try {
    yield* capGunzipOutput({ read: () => out.next() }, maxOutputBytes, async () => {
      await feed;
      return inputError;
    });
  } finally {
    stopped = true;
    gz.destroy();
  }
}
