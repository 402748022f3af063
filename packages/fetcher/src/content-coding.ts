import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from 'node:zlib';
import { WebBodyError } from './errors.js';
import { nextEvent } from './stream-events.js';

const noop = () => {};

export type ContentCoding = 'gzip' | 'deflate' | 'br';

/**
 * The decodings to apply, in order, for a Content-Encoding header; `null` when it names a coding
 * we cannot undo (the body is then passed on as it came, and the document sniffing downstream
 * gets its chance).
 */
export function parseContentEncoding(header: string | null): ContentCoding[] | null {
  if (header === null) return [];
  const codings: ContentCoding[] = [];
  for (const part of header.split(',')) {
    const c = part.trim().toLowerCase();
    if (c === '' || c === 'identity') continue;
    if (c === 'gzip' || c === 'x-gzip') codings.push('gzip');
    else if (c === 'deflate') codings.push('deflate');
    else if (c === 'br') codings.push('br');
    else return null;
  }
  // Applied left to right by the server, so undone right to left.
  return codings.reverse();
}

/** RFC 1950 header check: "deflate" is meant to be zlib-wrapped, but some servers send it raw. */
function looksLikeZlib(b0: number, b1: number): boolean {
  return (b0 & 0x0f) === 8 && b0 >> 4 <= 7 && ((b0 << 8) | b1) % 31 === 0;
}

function createDecoder(coding: ContentCoding, head: Buffer, chunkSize: number): Transform {
  switch (coding) {
    case 'gzip':
      return createGunzip({ chunkSize });
    case 'br':
      return createBrotliDecompress({ chunkSize });
    case 'deflate':
      return head.length >= 2 && !looksLikeZlib(head[0], head[1])
        ? createInflateRaw({ chunkSize })
        : createInflate({ chunkSize });
  }
}

/**
 * Decodes one content coding, pulled by the reader: the decoder only works when output is
 * wanted, so a bomb expands no further than the reader's cap lets it.
 */
export async function* decode(
  src: AsyncGenerator<Buffer>,
  coding: ContentCoding,
  chunkSize: number,
  url: string,
  state: { readonly rawOverflow: boolean },
): AsyncGenerator<Buffer> {
  let inputDone = false;
  let z: Transform | undefined;
  try {
    // Enough of the head to tell zlib-wrapped deflate from raw deflate.
    const head: Buffer[] = [];
    let headBytes = 0;
    while (headBytes < 2) {
      const r = await src.next();
      if (r.done) {
        inputDone = true;
        break;
      }
      head.push(r.value);
      headBytes += r.value.length;
    }
    // An empty body under a Content-Encoding (a HEAD-like answer, a 204) decodes to nothing.
    if (headBytes === 0) return;
    const headBuf = Buffer.concat(head);
    if (coding === 'gzip' && !(headBuf[0] === 0x1f && headBuf[1] === 0x8b)) {
      // Labelled gzip but not gzip (a misconfigured server): hand the bytes on untouched.
      yield headBuf;
      if (!inputDone) {
        while (true) {
          const r = await src.next();
          if (r.done) break;
          yield r.value;
        }
        inputDone = true;
      }
      return;
    }
    const decoder = createDecoder(coding, headBuf, chunkSize);
    z = decoder;
    decoder.on('error', noop);
    for (const h of head) decoder.write(h);
    if (inputDone) decoder.end();

    let pendingInput: Promise<IteratorResult<Buffer>> | null = null;
    while (true) {
      const out = decoder.read() as Buffer | null;
      if (out !== null) {
        yield out;
        continue;
      }
      if (decoder.errored) {
        // A body cut at the raw cap ends mid-stream on purpose; the cap error is reported instead.
        if (state.rawOverflow) return;
        throw new WebBodyError(
          'USP_DECODING',
          url,
          `Cannot decode Content-Encoding ${coding}: ${decoder.errored.message}`,
          0,
          { cause: decoder.errored },
        );
      }
      if (decoder.readableEnded) return;
      if (!inputDone && !decoder.writableNeedDrain) {
        pendingInput ??= src.next();
        const wake = nextEvent(decoder, ['readable', 'end', 'error', 'close']);
        const r = await Promise.race([pendingInput, wake.promise.then(() => null)]);
        wake.cancel();
        if (r === null) continue;
        pendingInput = null;
        if (r.done) {
          inputDone = true;
          decoder.end();
        } else decoder.write(r.value);
        continue;
      }
      await nextEvent(decoder, ['readable', 'end', 'error', 'close', 'drain']).promise;
    }
  } finally {
    z?.destroy();
    if (!inputDone) await src.return(undefined);
  }
}
