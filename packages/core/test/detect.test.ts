import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { concatBytes } from '../src/engine/bytes.js';
import {
  firstNonWhitespace,
  hasGzipMagic,
  peekBytes,
  sniffMarkup,
  unwrapGzip,
} from '../src/engine/detect.js';
import { GunzipError, gunzip, isTooLargeError } from '../src/engine/gunzip.js';

const enc = new TextEncoder();

async function* from(parts: readonly Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield p;
}

/** Reads a stream to its end: the bytes, and the error that ended it if one did. */
async function drain(stream: AsyncIterable<Uint8Array>): Promise<{ bytes: Uint8Array; error: unknown }> {
  const parts: Uint8Array[] = [];
  try {
    for await (const chunk of stream) parts.push(chunk);
    return { bytes: concatBytes(parts), error: null };
  } catch (error) {
    return { bytes: concatBytes(parts), error };
  }
}

/** Compares as text: deep equality on large typed arrays is slow in the test runner. */
function str(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}

function split(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

const text = '<urlset>'.concat('<url><loc>http://example.com/x</loc></url>'.repeat(2000), '</urlset>');
const plain = enc.encode(text);
const gz = new Uint8Array(gzipSync(plain));

describe('gunzip', () => {
  it('decompresses, whatever the input chunking', async () => {
    for (const size of [1, 7, 100, 1 << 20]) {
      const { bytes, error } = await drain(gunzip(from(split(gz, size)), 1 << 30));
      expect(error).toBeNull();
      expect(str(bytes)).toBe(text);
    }
  });

  it('concatenates multi-member streams', async () => {
    const { bytes } = await drain(
      gunzip(from([new Uint8Array(gzipSync('ab')), new Uint8Array(gzipSync('cd'))]), 100),
    );
    expect(new TextDecoder().decode(bytes)).toBe('abcd');
  });

  // Node 24 and browsers end a DecompressionStream at the first member's end ("trailing junk");
  // every member must still be read, whatever the chunking and however slowly the output is taken.
  it('reads every member of a multi-member stream, whatever the chunking and pace', async () => {
    const members = [text, '', 'tail'.repeat(3), text.slice(0, 70_000)];
    const joined = concatBytes(members.map((m) => new Uint8Array(gzipSync(m))));
    for (const size of [1, 7, 2048, 5000, joined.length]) {
      for (const slow of [false, true]) {
        const parts: Uint8Array[] = [];
        let error: unknown = null;
        try {
          for await (const chunk of gunzip(from(split(joined, size)), 1 << 30)) {
            parts.push(chunk);
            // A consumer that parses between chunks: the decompressor runs ahead meanwhile.
            if (slow) await new Promise((resolve) => setImmediate(resolve));
          }
        } catch (e) {
          error = e;
        }
        expect({ size, slow, error }).toEqual({ size, slow, error: null });
        expect(str(concatBytes(parts))).toBe(members.join(''));
      }
    }
  });

  // (Node 20 and 22's DecompressionStream drop the last output before a failure: not all of the
  // first member comes out there, but nothing wrong does.)
  it('throws gzip on junk or a cut member after a complete member', async () => {
    const first = new Uint8Array(gzipSync(text));
    const second = new Uint8Array(gzipSync('more'));
    for (const after of [enc.encode('junk after the member'), second.subarray(0, 12)]) {
      const { bytes, error } = await drain(gunzip(from(split(concatBytes([first, after]), 100)), 1 << 30));
      expect(`${text}m`.startsWith(str(bytes))).toBe(true);
      expect((error as GunzipError).code).toBe('USP_DECODING');
    }
  });

  it('caps the output across members', async () => {
    const joined = concatBytes([new Uint8Array(gzipSync('abc')), new Uint8Array(gzipSync('defg'))]);
    const { bytes, error } = await drain(gunzip(from([joined]), 5));
    expect(str(bytes)).toBe('abcde');
    expect((error as GunzipError).code).toBe('USP_TOO_LARGE');
  });

  it('yields exactly the cap, then throws too-large', async () => {
    const { bytes, error } = await drain(gunzip(from([gz]), 1000));
    expect(str(bytes)).toBe(text.slice(0, 1000));
    expect(error).toBeInstanceOf(GunzipError);
    expect((error as GunzipError).code).toBe('USP_TOO_LARGE');
    expect(isTooLargeError(error)).toBe(true);
  });

  it('keeps what decompressed from a cut stream, then throws gzip', async () => {
    const { bytes, error } = await drain(gunzip(from(split(gz.subarray(0, gz.length >> 1), 50)), 1 << 30));
    expect(bytes.length).toBeGreaterThan(0);
    expect(str(bytes)).toBe(text.slice(0, bytes.length));
    expect((error as GunzipError).code).toBe('USP_DECODING');
    expect(isTooLargeError(error)).toBe(false);
  });

  it('throws gzip on data that is not gzip', async () => {
    const { error } = await drain(gunzip(from([enc.encode('not gzip at all')]), 100));
    expect((error as GunzipError).code).toBe('USP_DECODING');
  });

  it("rethrows the input's own error after what decompressed", async () => {
    const reset = new Error('connection reset');
    async function* broken() {
      yield gz.subarray(0, gz.length >> 1);
      throw reset;
    }
    const { bytes, error } = await drain(gunzip(broken(), 1 << 30));
    expect(error).toBe(reset);
    expect(bytes.length).toBeGreaterThan(0);
    expect(str(bytes)).toBe(text.slice(0, bytes.length));
  });

  it('releases the input when the consumer stops early, even with a read pending', async () => {
    let released = false;
    const parts = split(gz, 64);
    const input: AsyncIterable<Uint8Array> = {
      [Symbol.asyncIterator]: () => ({
        // After its data the body stalls: only return() can end it.
        next: () =>
          parts.length > 0
            ? Promise.resolve({ done: false, value: parts.shift() as Uint8Array })
            : new Promise<IteratorResult<Uint8Array>>(() => {}),
        return: () => {
          released = true;
          return Promise.resolve({ done: true, value: undefined });
        },
      }),
    };
    for await (const _chunk of gunzip(input, 1 << 30)) break;
    expect(released).toBe(true);
  });
});

describe('unwrapGzip', () => {
  const opts = { gunzip, maxOutputBytes: 1 << 30 };

  it('passes a plain stream through unchanged', async () => {
    const layers: number[] = [];
    const { bytes } = await drain(
      unwrapGzip(from(split(plain, 1)), { ...opts, onLayer: (l) => layers.push(l) }),
    );
    expect(str(bytes)).toBe(text);
    expect(layers).toEqual([]);
  });

  it('unwraps nested layers while the magic is there, at most maxLayers', async () => {
    const three = new Uint8Array(gzipSync(gzipSync(gzipSync(plain))));
    const layers: number[] = [];
    const { bytes } = await drain(
      unwrapGzip(from(split(three, 3)), { ...opts, onLayer: (l) => layers.push(l) }),
    );
    expect(str(bytes)).toBe(text);
    expect(layers).toEqual([1, 2, 3]);
    const two = await drain(unwrapGzip(from([three]), { ...opts, maxLayers: 2 }));
    expect(hasGzipMagic(two.bytes)).toBe(true);
  });

  it('finds the magic split across one-byte chunks', async () => {
    const { bytes } = await drain(unwrapGzip(from(split(gz, 1)), opts));
    expect(str(bytes)).toBe(text);
  });

  it('caps every layer', async () => {
    const bomb = new Uint8Array(gzipSync(gzipSync(new Uint8Array(10_000_000))));
    const { bytes, error } = await drain(unwrapGzip(from([bomb]), { gunzip, maxOutputBytes: 5000 }));
    expect(bytes.length).toBeLessThanOrEqual(5000);
    expect(isTooLargeError(error)).toBe(true);
  });

  it('handles empty and one-byte streams', async () => {
    expect((await drain(unwrapGzip(from([]), opts))).bytes).toEqual(new Uint8Array(0));
    expect((await drain(unwrapGzip(from([new Uint8Array([0x1f])]), opts))).bytes).toEqual(
      new Uint8Array([0x1f]),
    );
  });
});

describe('peekBytes', () => {
  it('replays the peeked bytes and the rest', async () => {
    const peeked = await peekBytes(
      from([new Uint8Array([1]), new Uint8Array([]), new Uint8Array([2, 3]), new Uint8Array([4])]),
      2,
    );
    expect(peeked.head).toEqual(new Uint8Array([1, 2, 3]));
    expect((await drain(peeked.stream)).bytes).toEqual(new Uint8Array([1, 2, 3, 4]));
  });

  it('replays an error met while peeking after the bytes before it', async () => {
    const boom = new Error('boom');
    async function* failing() {
      yield new Uint8Array([9]);
      throw boom;
    }
    const peeked = await peekBytes(failing(), 2);
    expect(peeked.head).toEqual(new Uint8Array([9]));
    const { bytes, error } = await drain(peeked.stream);
    expect(bytes).toEqual(new Uint8Array([9]));
    expect(error).toBe(boom);
  });
});

describe('sniffing XML vs text', () => {
  it('decides on the first non-whitespace character, after any amount of whitespace', () => {
    expect(sniffMarkup('<urlset>')).toBe('xml');
    expect(sniffMarkup(`${' '.repeat(10_000)}\n\t\r<urlset>`)).toBe('xml');
    expect(sniffMarkup('\ufeff\u00a0\u2028\u3000\x1c\x85 <a/>')).toBe('xml');
    expect(sniffMarkup('  http://example.com/')).toBe('text');
    expect(sniffMarkup('\0<a/>')).toBe('text');
    expect(sniffMarkup(' \n ')).toBeNull();
    expect(sniffMarkup('')).toBeNull();
    expect(firstNonWhitespace('  x', 1)).toBe(2);
  });

  it('finds gzip by magic only', () => {
    expect(hasGzipMagic(gz)).toBe(true);
    expect(hasGzipMagic(plain)).toBe(false);
    expect(hasGzipMagic(new Uint8Array([0x1f]))).toBe(false);
  });
});
