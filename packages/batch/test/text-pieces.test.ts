import { describe, expect, it } from 'vitest';
import { ChunkPool } from '../src/byte-chunks.js';
import { TextPieces } from '../src/text-pieces.js';

const parts = Array.from({ length: 300 }, (_, i) => `${i}:${'x'.repeat(i % 23)}\u20ac`);

describe('TextPieces', () => {
  it('separates parts across many pieces, never before the first', () => {
    const text = new TextPieces('utf8', { pieceChars: 40, chunkBytes: 64, separator: '\n' });
    for (const p of parts) text.add(p);
    expect(text.pieces().length).toBeGreaterThan(10);
    expect(text.bytes().toString('utf8')).toBe(parts.join('\n'));
  });

  it('ends every part with the separator when terminated, across reads', () => {
    const text = new TextPieces('utf8', {
      pieceChars: 40,
      chunkBytes: 64,
      separator: '\n',
      terminated: true,
    });
    for (const p of parts.slice(0, 150)) text.add(p);
    const first = Buffer.concat(text.pieces()).toString('utf8');
    text.clear();
    for (const p of parts.slice(150)) text.add(p);
    expect(first + text.bytes().toString('utf8')).toBe(parts.map((p) => `${p}\n`).join(''));
    text.clear();
    expect(text.bytes().length).toBe(0);
  });

  it('turns the parts left when the synchronous work ends into bytes in a microtask', async () => {
    const pool = new ChunkPool(64, 4);
    pool.give([Buffer.alloc(64)]);
    const text = new TextPieces('utf8', { pieceChars: 1000, chunkBytes: 64, separator: '\n', pool });
    text.add('a');
    text.add('b');
    // Below a piece: still strings, no chunk taken yet.
    expect(pool.size).toBe(1);
    await null;
    expect(pool.size).toBe(0);
    // Parts added later go after a separator, and the bytes are the same as in one piece.
    text.add('c');
    await null;
    expect(text.bytes().toString('utf8')).toBe('a\nb\nc');
    text.recycle();
    expect(pool.size).toBe(1);
  });
});
