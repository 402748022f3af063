import { describe, expect, it } from 'vitest';
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
});
