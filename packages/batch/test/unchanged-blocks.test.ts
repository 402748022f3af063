import { describe, expect, it } from 'vitest';
import { UnchangedBlocks } from '../src/unchanged-blocks.js';

const SITE = 'https://ü.example/dir/';

/** A held row's line as `PageTracker` writes it. */
const line = (url: string, sitemap = `${SITE}s.xml`, tail = '"change":"unchanged"'): string =>
  `{"site":${JSON.stringify(SITE)},"sitemap":${JSON.stringify(sitemap)},"url":${JSON.stringify(url)},` +
  `"priority":0.5,"lastModified":"2026-11-20","changeFrequency":null,"newsStory":null,"images":null,` +
  `"alternates":null,${tail}}`;
const block = (lines: readonly string[]): Buffer => Buffer.from(lines.map((l) => `${l}\n`).join(''));

describe('UnchangedBlocks', () => {
  const urls = [`${SITE}a`, `${SITE}ß/é`, `${SITE}😀?q="x"\\y`];
  const text = block(urls.map((u) => line(u)));

  it('cuts a block of plain unchanged rows of one sitemap to what varies, in either encoding', () => {
    const utf8 = new UnchangedBlocks(SITE, 'utf8').cut(text, urls.length);
    const latin1 = new UnchangedBlocks(SITE, 'latin1').cut(text, urls.length);
    expect(utf8?.sitemap).toBe(`${SITE}s.xml`);
    expect(latin1?.sitemap).toBe(`${SITE}s.xml`);
    const pages = JSON.parse(utf8?.pages ?? 'null');
    expect(pages).toEqual(
      urls.map((url) => ({ url, priority: 0.5, lastModified: '2026-11-20', changeFrequency: null })),
    );
    expect(Buffer.from(latin1?.pages ?? '', 'latin1').toString('utf8')).toBe(utf8?.pages);
  });

  it('refuses any other block', () => {
    const blocks = new UnchangedBlocks(SITE, 'utf8');
    const plain = urls.map((u) => line(u));
    expect(blocks.cut(text, urls.length - 1)).toBeNull();
    expect(blocks.cut(Buffer.alloc(0), 0)).toBeNull();
    for (const odd of [
      line(`${SITE}b`, `${SITE}other.xml`),
      line(`${SITE}b`, undefined, '"change":"new"'),
      line(`${SITE}\ud800`),
      line(`${SITE}b`).replace('"alternates":null,', '"alternates":null,"extensions":{"x":1},'),
      line(`${SITE}b`).replace(JSON.stringify(SITE), JSON.stringify('https://other.example/')),
    ]) {
      expect(blocks.cut(block([...plain, odd]), plain.length + 1)).toBeNull();
    }
    expect(new UnchangedBlocks('https://other.example/', 'latin1').cut(text, urls.length)).toBeNull();
  });
});
