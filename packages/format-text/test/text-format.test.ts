import { DEFAULT_PRIORITY, InvalidOptionError } from '@usp-ts/core';
import { streamedBody } from '@usp-ts/testkit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plainText } from '../src/index.js';
import { run } from './registry.js';

describe('plainText format', () => {
  it('is the fallback text format: named text, claims every non-XML document', () => {
    const f = plainText();
    expect(f.kind).toBe('text');
    expect(f.name).toBe('text');
    expect(
      f.claims({ url: 'https://example.com/robots.txt', headers: () => null, head: 'User-agent: *' }),
    ).toBe(true);
    expect(f.claims({ url: 'https://example.com/a', headers: () => null, head: '' })).toBe(true);
  });

  it('makes one page per URL line, with default fields', async () => {
    const r = await run('https://example.com/a\nhttps://example.com/b\n');
    expect(r.type).toBe('PagesTextSitemap');
    expect(r.pages).toEqual([
      {
        url: 'https://example.com/a',
        priority: DEFAULT_PRIORITY,
        lastModified: null,
        changeFrequency: null,
        newsStory: null,
        images: null,
        alternates: null,
      },
      expect.objectContaining({ url: 'https://example.com/b', priority: 0.5 }),
    ]);
    expect(r.codes).toEqual([]);
  });

  it('strips lines (Python whitespace), skips blank ones silently', async () => {
    const r = await run('\n\n   https://example.com/a  \t\n\u3000https://example.com/b\x1f\n\n');
    expect(r.urls).toEqual(['https://example.com/a', 'https://example.com/b']);
    expect(r.codes).toEqual([]);
  });

  it('splits lines as Python splitlines() does', async () => {
    const r = await run(
      'https://example.com/a\rhttps://example.com/b\r\nhttps://example.com/c\u2028https://example.com/d\x85https://example.com/e',
    );
    expect(r.urls).toEqual(['a', 'b', 'c', 'd', 'e'].map((x) => `https://example.com/${x}`));
  });

  it('keeps http(s) URLs only, verbatim, with a warning for each other line', async () => {
    const r = await run(
      [
        'HTTPS://EXAMPLE.COM/A',
        'https://example.com/ü',
        '/relative',
        'ftp://example.com/f',
        'http://x',
        'https://example.com/with space',
        'Some prose',
      ].join('\n'),
    );
    expect(r.urls).toEqual(['HTTPS://EXAMPLE.COM/A', 'https://example.com/ü']);
    expect(r.codes).toEqual(Array(5).fill('invalid-url'));
    expect(r.warnings[0].message).toContain('Line 3');
    expect(r.warnings[0].message).toContain('/relative');
    expect(r.warnings[0].url).toBe('https://example.com/sitemap.txt');
  });

  it('de-duplicates on the exact text, keeping the first position', async () => {
    const r = await run(
      'https://example.com/a\nhttps://example.com/b\n  https://example.com/a\nhttps://example.com/A\n',
    );
    expect(r.urls).toEqual(['https://example.com/a', 'https://example.com/b', 'https://example.com/A']);
    expect(r.codes).toEqual(['duplicate-url']);
    expect(r.warnings[0].message).toBe('Line 3 "https://example.com/a" repeats line 1, skipped');
  });

  it('warns about each repeated URL with its line, beside the invalid lines', async () => {
    const r = await run('http://e.com/t1\nnot a url\nhttp://e.com/t1\nhttp://e.com/t2\n');
    expect(r.urls).toEqual(['http://e.com/t1', 'http://e.com/t2']);
    expect(r.codes).toEqual(['invalid-url', 'duplicate-url']);
    expect(r.warnings[1].message).toContain('Line 3');
  });

  it('caps the duplicate warnings separately and sums up the rest', async () => {
    const body = Array.from({ length: 20 }, () => 'https://example.com/same').join('\n');
    const r = await run(`junk\n${body}`, { text: { maxWarnings: 3 } });
    expect(r.urls).toEqual(['https://example.com/same']);
    expect(r.codes).toEqual(['invalid-url', ...Array(4).fill('duplicate-url')]);
    expect(r.warnings[1].message).toBe('Line 3 "https://example.com/same" repeats line 2, skipped');
    expect(r.warnings[4].message).toBe('16 more repeated URLs were skipped');
  });

  it('caps the warnings and sums up the rest', async () => {
    const junk = Array.from({ length: 1000 }, (_, i) => `junk ${i}`).join('\n');
    const r = await run(`${junk}\nhttps://example.com/ok\n`, { text: { maxWarnings: 3 } });
    expect(r.urls).toEqual(['https://example.com/ok']);
    expect(r.codes).toEqual(Array(4).fill('invalid-url'));
    expect(r.warnings[3].message).toBe('997 more lines that are not http(s) URLs were skipped');
  });

  it('with the default cap, a junk file gives a bounded number of warnings', async () => {
    const junk = Array.from({ length: 100_000 }, (_, i) => `junk ${i}`).join('\n');
    const r = await run(junk);
    expect(r.pages).toEqual([]);
    expect(r.warnings.length).toBe(51);
    expect(r.warnings[50].message).toBe('99950 more lines that are not http(s) URLs were skipped');
  });

  it('reads a line split across chunks and a CRLF split across chunks once', async () => {
    const r = await run(streamedBody(['https://exa', 'mple.com/a\r', '\nhttps://example.com/b\r', '\r\n']));
    expect(r.urls).toEqual(['https://example.com/a', 'https://example.com/b']);
  });

  it('drops the unterminated last line when the body broke off', async () => {
    const r = await run(
      streamedBody(['https://example.com/a\nhttps://example.com/b\nhttps://example.com/trunc'], true),
    );
    expect(r.urls).toEqual(['https://example.com/a', 'https://example.com/b']);
    expect(r.truncated).toBe(true);
  });

  it('skips an over-long line with a warning', async () => {
    const r = await run(`https://example.com/${'x'.repeat(500)}\nhttps://example.com/ok`, {
      text: { maxLineLength: 100 },
    });
    expect(r.urls).toEqual(['https://example.com/ok']);
    expect(r.codes).toEqual(['invalid-url']);
    expect(r.warnings[0].message).toContain('longer than 100');
  });

  it('stops at the page budget and says there was more', async () => {
    const body = Array.from({ length: 10 }, (_, i) => `https://example.com/${i}`).join('\n');
    const r = await run(body, { limits: { maxPagesPerDocument: 4 } });
    expect(r.urls).toHaveLength(4);
    expect(r.codes).toEqual(['limit']);
    expect(r.truncated).toBe(true);
  });

  it('does not call the budget spent when the document has exactly that many pages', async () => {
    const body = Array.from({ length: 4 }, (_, i) => `https://example.com/${i}`).join('\n');
    const r = await run(`${body}\nhttps://example.com/0\njunk`, { limits: { maxPagesPerDocument: 4 } });
    expect(r.urls).toHaveLength(4);
    expect(r.codes).toEqual(['duplicate-url', 'invalid-url']);
    expect(r.truncated).toBe(false);
  });

  it('gives an empty pages sitemap for an empty or junk body (never Invalid)', async () => {
    for (const body of ['', '\n', 'This is a homepage.', '\u0000\u0001\u0002']) {
      const r = await run(body);
      expect(r.type).toBe('PagesTextSitemap');
      expect(r.pages).toEqual([]);
    }
  });

  it('checks its options early', () => {
    expect(() => plainText({ maxWarnings: -1 })).toThrow(InvalidOptionError);
    expect(() => plainText({ maxWarnings: 1.5 })).toThrow(InvalidOptionError);
    expect(() => plainText({ maxLineLength: 0 })).toThrow(InvalidOptionError);
    expect(() => plainText(null as unknown as object)).toThrow(InvalidOptionError);
    expect(plainText({ maxWarnings: 0 }).name).toBe('text');
  });

  it('never throws, whatever the bytes, and only emits http(s) URLs', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 400 }), async (bytes) => {
        const r = await run(bytes);
        expect(['PagesTextSitemap', 'PagesXMLSitemap', 'InvalidSitemap']).toContain(r.type);
        for (const url of r.urls) expect(url).toMatch(/^https?:\/\/\S/i);
        expect(r.codes).not.toContain('plugin-error');
      }),
      { numRuns: 100 },
    );
  }, 60_000);

  it('never throws on URL-like lines', async () => {
    const line = fc.oneof(fc.webUrl(), fc.string({ maxLength: 30 }), fc.constant(''));
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { maxLength: 30 }),
        fc.constantFrom('\n', '\r\n', '\r', '\u2028'),
        async (lines, eol) => {
          const r = await run(lines.join(eol));
          expect(new Set(r.urls).size).toBe(r.urls.length);
          expect(r.codes).not.toContain('plugin-error');
        },
      ),
      { numRuns: 100 },
    );
  }, 60_000);
});
