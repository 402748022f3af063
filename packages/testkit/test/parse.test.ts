import type { TextFormat } from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { parseWith, streamedBody } from '../src/parse.js';

/** A text format that records what the driver handed it. */
function recorder(seen: { header: string | null; text: string }): TextFormat {
  return {
    kind: 'text',
    name: 'recorder',
    claims: (doc) => {
      seen.header = doc.headers('x-test');
      return true;
    },
    createParser: () => ({
      write(text) {
        seen.text += text;
      },
      end: () => ({ type: 'PagesTextSitemap' }),
    }),
  };
}

describe('parseWith', () => {
  it('parses through core with only the given plugins, at the URL and with the headers given', async () => {
    const seen = { header: null as string | null, text: '' };
    const doc = await parseWith([recorder(seen)], 'a\nb\n', {
      url: 'https://example.com/s.txt',
      headers: { 'X-Test': 'yes' },
    });
    expect(doc.sitemap.url).toBe('https://example.com/s.txt');
    expect(seen.header).toBe('yes');
    expect(seen.text).toBe('a\nb\n');
  });
});

describe('streamedBody', () => {
  it('yields each piece as UTF-8 bytes, then breaks off when asked', async () => {
    const got: string[] = [];
    const dec = new TextDecoder();
    for await (const chunk of streamedBody(['é', 'b'])) got.push(dec.decode(chunk));
    expect(got).toEqual(['é', 'b']);
    const broken = streamedBody(['x'], true);
    await expect(
      (async () => {
        for await (const _ of broken);
      })(),
    ).rejects.toThrow('connection reset');
  });
});
