import { describe, expect, it } from 'vitest';
import { capGunzipOutput, GunzipError } from '../src/engine/gunzip.js';

// A decompressor's output as capGunzipOutput reads it: the given chunks, then an end or a failure.
function output(chunks: Uint8Array[], failure?: Error) {
  let i = 0;
  return {
    read: async () => {
      if (i < chunks.length) return { done: false, value: chunks[i++] };
      if (failure) throw failure;
      return { done: true };
    },
  };
}

async function drain(it: AsyncIterable<Uint8Array>) {
  const got: number[] = [];
  try {
    for await (const c of it) got.push(c.length);
    return { got, error: null };
  } catch (error) {
    return { got, error };
  }
}

describe('capGunzipOutput', () => {
  const ok = async () => null;

  it('yields the output as it comes when it stays under the cap', async () => {
    const r = await drain(capGunzipOutput(output([new Uint8Array(3), new Uint8Array(4)]), 7, ok));
    expect(r).toEqual({ got: [3, 4], error: null });
  });

  it('yields up to the cap, then throws too-large', async () => {
    const r = await drain(capGunzipOutput(output([new Uint8Array(5), new Uint8Array(5)]), 8, ok));
    expect(r.got).toEqual([5, 3]);
    expect(r.error).toBeInstanceOf(GunzipError);
    expect((r.error as GunzipError).code).toBe('USP_TOO_LARGE');
  });

  it('turns a decompressor failure into a gzip error, after what decompressed', async () => {
    const r = await drain(capGunzipOutput(output([new Uint8Array(2)], new Error('bad header')), 100, ok));
    expect(r.got).toEqual([2]);
    expect((r.error as GunzipError).code).toBe('USP_DECODING');
    expect((r.error as Error).message).toContain('bad header');
  });

  it("rethrows the input's own error rather than a gzip error", async () => {
    const reset = Object.assign(new Error('socket reset'), { code: 'ECONNRESET' });
    const failedInput = async () => ({ error: reset });
    const broken = await drain(capGunzipOutput(output([], new Error('unexpected end')), 100, failedInput));
    expect(broken.error).toBe(reset);
    // Also when the output ended cleanly: the input's error is reported once the input side is done.
    const ended = await drain(capGunzipOutput(output([new Uint8Array(1)]), 100, failedInput));
    expect(ended).toEqual({ got: [1], error: reset });
  });
});
