import {
  createRegistry,
  newPageDraft,
  type ParseOutcome,
  type TextFormat,
  type XmlExtension,
  type XmlFormat,
} from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { runExtension, wrapEntries } from '../src/extension-host.js';
import { cutOffsets, describeFormatKit, expectPrefix, expectSane } from '../src/kit.js';
import { applyEdits } from '../src/mutate.js';
import { shufflePrefixes } from '../src/prefixes.js';
import { parseChunks, snapshot } from '../src/snapshot.js';

const NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';
const XHTML = 'http://www.w3.org/1999/xhtml';

/** A small urlset format that follows the contracts (used to test the kit itself). */
function miniUrlset(options: { emitCutEntry?: boolean } = {}): XmlFormat {
  return {
    kind: 'xml',
    name: 'mini-urlset',
    roots: [{ ns: NS, local: 'urlset' }],
    createHandler(ctx) {
      let loc: string | null = null;
      let alternates: { hreflang: string; href: string }[] = [];
      let open = false;
      return {
        type: 'PagesXMLSitemap',
        open(el) {
          if (el.depth === 1 && el.local === 'url') {
            open = true;
            loc = null;
            alternates = [];
          }
          const isLink = el.ns === XHTML && el.local === 'link';
          if (open && isLink && el.attrs.hreflang && el.attrs.href) {
            alternates.push({ hreflang: el.attrs.hreflang, href: el.attrs.href });
          }
        },
        close(el, text) {
          if (el.ns !== NS) return;
          if (el.local === 'loc' && open) loc = text.trim();
          if (el.depth === 1 && el.local === 'url') {
            open = false;
            if (loc)
              ctx.page({ ...newPageDraft(loc), alternates: alternates.length > 0 ? alternates : null });
          }
        },
        end(truncated): ParseOutcome {
          if (truncated && open && loc && options.emitCutEntry) ctx.page(newPageDraft(loc));
          return { type: 'PagesXMLSitemap' };
        },
      };
    },
  };
}

function miniText(): TextFormat {
  return {
    kind: 'text',
    name: 'mini-text',
    claims: () => true,
    createParser(ctx) {
      let rest = '';
      const line = (l: string) => {
        const url = l.trim();
        if (/^https?:\/\/\S+$/.test(url) && url.length <= ctx.limits.maxUrlLength)
          ctx.page(newPageDraft(url));
      };
      return {
        type: 'PagesTextSitemap',
        write(text) {
          const lines = (rest + text).split('\n');
          rest = (lines.pop() as string).slice(0, 10_000);
          for (const l of lines) line(l);
        },
        end(truncated) {
          if (!truncated) line(rest);
          return { type: 'PagesTextSitemap' };
        },
      };
    },
  };
}

const urlset = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="${NS}" xmlns:xhtml="${XHTML}">
  <url><loc>https://example.com/a</loc><xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/a"/></url>
  <url><loc>https://example.com/b?x=1&amp;y=2</loc></url>
  <url><loc><![CDATA[https://example.com/c]]></loc></url>
  <url><loc>https://example.com/caf\u00e9</loc></url>
</urlset>
`;

describeFormatKit({
  name: 'kit self-test',
  plugins: [miniUrlset(), miniText()],
  samples: [
    { name: 'urlset', url: 'https://example.com/sitemap.xml', input: urlset },
    {
      name: 'text',
      url: 'https://example.com/sitemap.txt',
      input: 'https://example.com/1\nnot a url\nhttps://example.com/2\n',
    },
  ],
});

describe('the kit catches broken formats', () => {
  it('fails a format that emits a half-read entry when cut', async () => {
    const registry = createRegistry([miniUrlset({ emitCutEntry: true })]);
    const bytes = new TextEncoder().encode(urlset);
    const full = snapshot(await parseChunks(registry, [bytes], { url: 'https://example.com/s.xml' }));
    // Inside the first entry, before its alternate: the half-read page lacks it.
    const at = urlset.indexOf('</loc>') + 6;
    const cut = snapshot(
      await parseChunks(registry, [bytes.subarray(0, at)], { url: 'https://example.com/s.xml' }),
    );
    expect(() => expectPrefix(cut, full, 'cut', true)).toThrow();
  });

  it('fails a format that throws', async () => {
    const throwing: TextFormat = {
      ...miniText(),
      createParser: () => ({
        write() {
          throw new Error('bug');
        },
        end: () => ({ type: 'PagesTextSitemap' }),
      }),
    };
    const doc = await parseChunks(createRegistry([throwing]), [new TextEncoder().encode('x')], {
      url: 'https://e.com/s',
    });
    expect(() => expectSane(doc, null)).toThrow();
  });
});

describe('shufflePrefixes', () => {
  const identity = <T>(a: T[]) => a;
  const reverse = <T>(a: T[]) => [...a].reverse();

  it('renames prefixes consistently, including the default namespace', () => {
    const doc = `<a xmlns="urn:a" xmlns:p="urn:p"><p:b x="1" p2:y="2"/><c/></a>`;
    expect(shufflePrefixes(doc, identity)).toBe(doc);
    const out = shufflePrefixes(doc, reverse) as string;
    // Candidates ['', 'p'] plus fresh names ['ns0', 'zz'], reversed: '' → zz, p → ns0.
    expect(out).toBe(`<zz:a xmlns:zz="urn:a" xmlns:ns0="urn:p"><ns0:b x="1" p2:y="2"/><zz:c/></zz:a>`);
  });

  it('leaves comments, CDATA and attribute values alone', () => {
    const doc = `<a xmlns:p="urn:p"><!-- <p:x> --><p:b v="<p:q>"><![CDATA[<p:z>]]></p:b></a>`;
    const out = shufflePrefixes(doc, reverse) as string;
    expect(out).toContain('<!-- <p:x> -->');
    expect(out).toContain('v="<p:q>"');
    expect(out).toContain('<![CDATA[<p:z>]]>');
    expect(out).not.toContain('<p:b');
  });

  it('refuses documents it cannot rename safely', () => {
    expect(shufflePrefixes('<a><b/></a>', reverse)).toBeNull();
    expect(shufflePrefixes('<a xmlns:p="urn:1"><p:b xmlns:p="urn:2"/></a>', reverse)).toBeNull();
    expect(shufflePrefixes('<a><q:b/></a>', reverse)).toBeNull();
  });
});

describe('helpers', () => {
  it('cutOffsets spreads over long documents and covers short ones', () => {
    expect(cutOffsets(5, false)).toEqual([0, 1, 2, 3, 4]);
    const many = cutOffsets(10_000, false);
    expect(many.length).toBeLessThan(200);
    expect(many[0]).toBe(0);
    expect(many.at(-1)).toBe(9_999);
  });

  it('applyEdits wraps positions and never throws', () => {
    const bytes = new Uint8Array([1, 2, 3]);
    expect(applyEdits(bytes, [{ kind: 'delete', at: 4, length: 2 }])).toEqual(new Uint8Array([3]));
    expect(applyEdits(bytes, [{ kind: 'insert', at: 1, bytes: new Uint8Array([9]) }])).toEqual(
      new Uint8Array([1, 9, 2, 3]),
    );
    expect(applyEdits(bytes, [{ kind: 'truncate', at: 2 }])).toEqual(new Uint8Array([1, 2]));
    expect(applyEdits(new Uint8Array(0), [{ kind: 'flip', at: 3, bit: 1 }])).toEqual(new Uint8Array(0));
  });
});

describe('runExtension', () => {
  const EXT = 'urn:example:ext';
  const tagExtension: XmlExtension = {
    name: 'tags',
    namespaces: [EXT],
    create: () => ({
      close(el, text, draft) {
        if (el.local === 'tag') {
          const ext = (draft.extensions ?? {}) as { tags?: string[] };
          draft.extensions = { ...ext, tags: [...(ext.tags ?? []), text.trim()] } as never;
        }
      },
      open() {},
    }),
  };

  it('runs an extension inside minimal host entries', async () => {
    const { pages, warnings } = await runExtension(
      tagExtension,
      '<entry><loc>https://e.com/a</loc><t:tag>one</t:tag><t:tag>two</t:tag></entry><entry><loc>https://e.com/b</loc></entry>',
      { namespaces: { t: EXT } },
    );
    expect(warnings).toEqual([]);
    expect(pages.map((p) => [p.url, (p.extensions as { tags?: string[] } | undefined)?.tags])).toEqual([
      ['https://e.com/a', ['one', 'two']],
      ['https://e.com/b', undefined],
    ]);
  });

  it('accepts a whole host document', async () => {
    const doc = wrapEntries('<entry><loc>https://e.com/a</loc></entry>');
    expect((await runExtension([tagExtension], doc)).pages).toHaveLength(1);
  });
});
