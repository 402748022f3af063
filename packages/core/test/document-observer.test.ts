import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { newPageDraft } from '../src/contract/model.js';
import type { DocumentPosition, TextFormat, XmlFormat } from '../src/contract/plugin.js';
import { createRegistry } from '../src/contract/registry.js';
import type { Warning } from '../src/contract/warning.js';
import { parseDocument } from '../src/engine/document.js';
import type { ParseObserver } from '../src/engine/document-options.js';
import { SITEMAP_NS } from './tiny-formats.js';

/** A urlset that reports each `<url>` it reads, and warns about a `<loc>` that is not http(s). */
function locatingUrlset(report = true): XmlFormat {
  return {
    kind: 'xml',
    name: 'locating-urlset',
    roots: [{ ns: SITEMAP_NS, local: 'urlset' }],
    createHandler(ctx) {
      let entries = 0;
      let loc = '';
      return {
        open(el) {
          if (el.local === 'url' && report) ctx.atEntry(++entries);
        },
        close(el, text) {
          if (el.local === 'loc') loc = text.trim();
          if (el.local !== 'url') return;
          if (loc.startsWith('http')) ctx.page(newPageDraft(loc));
          else ctx.warn('invalid-url', `not http(s): ${loc}`);
          if (report) ctx.atEntry(0);
        },
        end: () => ({ type: 'PagesXMLSitemap' }),
      };
    },
  };
}

/** One URL a line, each line reported. */
function locatingText(): TextFormat {
  return {
    kind: 'text',
    name: 'locating-text',
    claims: () => true,
    createParser(ctx) {
      let line = 0;
      let rest = '';
      const read = (text: string) => {
        ctx.atLine(++line);
        if (text.startsWith('http')) ctx.page(newPageDraft(text));
        else if (text !== '') ctx.warn('invalid-url', `not http(s): ${text}`);
      };
      return {
        write(text) {
          const lines = (rest + text).split('\n');
          rest = lines.pop() ?? '';
          for (const l of lines) read(l);
        },
        end() {
          if (rest !== '') read(rest);
          return { type: 'PagesTextSitemap' };
        },
      };
    },
  };
}

type Seen = [string, string, DocumentPosition | null];

/** An observer that lists what it sees. */
function watch(): { observer: ParseObserver; seen: Seen[] } {
  const seen: Seen[] = [];
  const observer: ParseObserver = {
    page: (p, at) => void seen.push(['page', p.url, at]),
    child: (c, at) => void seen.push(['child', c.url, at]),
    warn: (code, _message, at) => void seen.push(['warn', code, at]),
  };
  return { observer, seen };
}

const registry = createRegistry([locatingUrlset(), locatingText()]);
const XML = `<?xml version="1.0"?><urlset xmlns="${SITEMAP_NS}"><url><loc>https://e.com/a</loc></url><url><loc>ftp://e.com/b</loc></url><url><loc>https://e.com/c</loc></url></urlset>`;

describe('parseDocument observer', () => {
  it('sees each page and warning at the entry the format reports, the decoded text and the root', async () => {
    const { observer, seen } = watch();
    let text = '';
    const warnings: Warning[] = [];
    const parsed = await parseDocument({
      url: 'https://e.com/sitemap.xml.gz',
      body: gzipSync(XML),
      registry,
      observer: {
        ...observer,
        text: (t) => {
          text += t;
        },
      },
      onWarning: (w) => warnings.push(w),
    });
    expect(seen).toEqual([
      ['page', 'https://e.com/a', { entry: 1 }],
      ['warn', 'invalid-url', { entry: 2 }],
      ['page', 'https://e.com/c', { entry: 3 }],
    ]);
    // Decoded: after gunzip, as the formats read it.
    expect(text).toBe(XML);
    expect(parsed.root).toEqual({ ns: SITEMAP_NS, local: 'urlset' });
    expect(parsed.gzipLayers).toBe(1);
    // The warning still reaches onWarning, and the result is the one an unobserved parse gives.
    expect(warnings.map((w) => w.code)).toEqual(['invalid-url']);
    const plain = await parseDocument({ url: 'https://e.com/sitemap.xml.gz', body: gzipSync(XML), registry });
    expect(parsed).toEqual(plain);
  });

  it('sees the line a text format reports', async () => {
    const { observer, seen } = watch();
    await parseDocument({
      url: 'https://e.com/sitemap.txt',
      body: 'https://e.com/a\n\nnot a url\nhttps://e.com/b',
      registry,
      observer,
    });
    expect(seen).toEqual([
      ['page', 'https://e.com/a', { line: 1 }],
      ['warn', 'invalid-url', { line: 3 }],
      ['page', 'https://e.com/b', { line: 4 }],
    ]);
  });

  it('gives null positions for a format that reports none, and text documents no root', async () => {
    const { observer, seen } = watch();
    await parseDocument({
      url: 'https://e.com/sitemap.xml',
      body: XML,
      registry: createRegistry([locatingUrlset(false)]),
      observer,
    });
    expect(seen.map((s) => s[2])).toEqual([null, null, null]);
    const text = await parseDocument({ url: 'https://e.com/s.txt', body: 'https://e.com/a', registry });
    expect(text.root).toBeNull();
  });

  it('refuses an observer that is not an object', async () => {
    await expect(
      parseDocument({
        url: 'https://e.com/s.xml',
        body: XML,
        registry,
        observer: 1 as unknown as ParseObserver,
      }),
    ).rejects.toThrow(/observer/);
  });
});
