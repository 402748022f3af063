import { describe, expect, it } from 'vitest';
import { ByteChunks, ChunkPool } from '../src/byte-chunks.js';

describe('ByteChunks', () => {
  it('gives back the bytes of every piece in order, across chunks and multi-byte characters', () => {
    const chunks = new ByteChunks('utf8', 64);
    const texts: string[] = [];
    for (let i = 0; i < 200; i++) {
      // Pieces that end a chunk mid-way, one larger than a chunk, 2-, 3- and 4-byte characters.
      const text = i === 50 ? 'é'.repeat(100) : `${i}:${'x'.repeat(i % 37)}\u00e9\u20ac\u{1f600}`;
      texts.push(text);
      chunks.add(text);
    }
    const pieces = chunks.pieces();
    expect(pieces.length).toBeGreaterThan(10);
    expect(Buffer.concat(pieces).equals(Buffer.from(texts.join('')))).toBe(true);
    // More text after a read goes after what was read.
    chunks.add('tail');
    expect(Buffer.concat(chunks.pieces()).toString()).toBe(`${texts.join('')}tail`);
    chunks.clear();
    expect(chunks.empty).toBe(true);
    expect(chunks.pieces()).toEqual([]);
  });

  it('writes latin1 text one byte a character', () => {
    const chunks = new ByteChunks('latin1', 16);
    const text = Array.from({ length: 40 }, (_, i) => String.fromCharCode(i * 6)).join('');
    chunks.add(text.slice(0, 10));
    chunks.add(text.slice(10));
    expect(Buffer.concat(chunks.pieces()).equals(Buffer.from(text, 'latin1'))).toBe(true);
  });

  it('takes its chunks from a pool and gives them back at recycle, never at clear', () => {
    const pool = new ChunkPool(16, 2);
    const first = new ByteChunks('utf8', 999, pool);
    first.add('0123456789');
    first.add('abcdefghij');
    // One text larger than a chunk gets a Buffer of its own, never pooled.
    first.add('x'.repeat(40));
    expect(Buffer.concat(first.pieces()).toString()).toBe(`0123456789abcdefghij${'x'.repeat(40)}`);
    const used = first.pieces().map((p) => p.buffer);
    first.recycle();
    expect(first.empty).toBe(true);
    expect(pool.size).toBe(2);
    // The next text is written into the same memory.
    const second = new ByteChunks('utf8', 999, pool);
    second.add('klmnopqrst');
    expect(second.pieces()[0]?.buffer).toBe(used[1]);
    expect(Buffer.concat(second.pieces()).toString()).toBe('klmnopqrst');
    expect(pool.size).toBe(1);
    second.clear();
    expect(pool.size).toBe(1);
    // At most `max` are kept.
    pool.give([Buffer.alloc(16), Buffer.alloc(16), Buffer.alloc(16)]);
    expect(pool.size).toBe(2);
  });
});
