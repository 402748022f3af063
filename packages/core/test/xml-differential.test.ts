/**
 * The fast path against sax (issue 37): for random sitemap-like documents, well-formed and
 * broken, cut into random pieces, the engine reading with the fast path (sax taking over where
 * it stops) reports exactly what it reports reading with sax alone: every event, text piece,
 * warning and the result. A fixed seed here; the bench runs many (`bench/src/differential.mjs`).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChildRef, Page } from '../src/contract/model.js';
import type { ParseContext, XmlElement, XmlFormat } from '../src/contract/plugin.js';
import { createRegistry } from '../src/contract/registry.js';
import type { Warning } from '../src/contract/warning.js';
import { createXmlEngine, type XmlEngineLimits, type XmlTokenizerChoice } from '../src/engine/xml.js';
import { xmlDocument } from './xml-documents.js';

const runs = (fallback: number): number => Number(process.env.USP_FUZZ_RUNS) || fallback;
const seed = Number(process.env.USP_FUZZ_SEED) || 37;

const NS = 'urn:test:root';

function recorder(events: string[]): XmlFormat {
  return {
    kind: 'xml',
    name: 'recorder',
    roots: [
      { ns: NS, local: 'doc' },
      { ns: '*', local: 'any' },
    ],
    createHandler(_ctx, root) {
      events.push(`root ${fmt(root)}`);
      return {
        open(el) {
          events.push(`open ${fmt(el)}`);
        },
        close(el, text) {
          events.push(`close ${fmt(el)} ${JSON.stringify(text)}`);
        },
        end(truncated) {
          events.push(`end ${truncated}`);
          return { type: 'PagesXMLSitemap' };
        },
      };
    },
  };
}

function fmt(el: XmlElement): string {
  return `${el.depth}:{${el.ns}}${el.local} ${JSON.stringify(el.attrs)}`;
}

function context(warnings: Warning[]): ParseContext {
  return {
    url: 'http://example.com/s.xml',
    limits: { maxPagesPerDocument: 1e6, maxChildrenPerIndex: 1e6, maxUrlLength: 1e6 },
    atEntry: () => {},
    atLine: () => {},
    warn: (code, message) => warnings.push({ code, message, url: 'http://example.com/s.xml' }),
    page: (_p: Page) => true,
    child: (_c: ChildRef) => true,
  };
}

function run(
  pieces: readonly string[],
  tokenizer: XmlTokenizerChoice,
  limits: Partial<XmlEngineLimits> = {},
) {
  const events: string[] = [];
  const warnings: Warning[] = [];
  const engine = createXmlEngine({
    url: 'http://example.com/s.xml',
    registry: createRegistry([recorder(events)]),
    ctx: context(warnings),
    limits,
    tokenizer,
  });
  for (const piece of pieces) engine.write(piece);
  const result = engine.end();
  return { events, warnings, result, fast: engine.tokenizer === 'fast' };
}

function cutAt(doc: string, cuts: number[]): string[] {
  const points = [0, ...cuts.filter((c) => c > 0 && c < doc.length).sort((a, b) => a - b), doc.length];
  return points.slice(1).map((end, i) => doc.slice(points[i], end));
}

const pieces = (doc: string) =>
  fc.oneof(
    fc.constant([doc]),
    fc.array(fc.nat({ max: Math.max(1, doc.length) }), { maxLength: 20 }).map((cuts) => cutAt(doc, cuts)),
  );

describe('xml engine: the fast path reports what sax reports', () => {
  it('on random documents, well-formed and broken, in random pieces', () => {
    let fastEnded = 0;
    fc.assert(
      fc.property(
        xmlDocument(NS).chain((doc) => fc.tuple(fc.constant(doc), pieces(doc))),
        ([doc, cut]) => {
          const sax = run([doc], 'sax');
          const fast = run(cut, 'auto');
          if (fast.fast) fastEnded++;
          expect(fast.events).toEqual(sax.events);
          expect(fast.warnings).toEqual(sax.warnings);
          expect(fast.result).toEqual(sax.result);
          // sax's own result does not depend on the cut either (what the fast path must keep).
          expect(run(cut, 'sax').events).toEqual(sax.events);
        },
      ),
      { seed, numRuns: runs(1500) },
    );
    // The generator exercises the fast path, not only the hand-over.
    expect(fastEnded).toBeGreaterThan(runs(1500) / 10);
  });

  it('names alike in first character and length stay apart (the fast path keeps short names)', () => {
    // `loc`, `lac` and `lxc` share a first character and a length; so do `url` and `uri`, and
    // the prefixed `ns:b` and `n:ab`; self-closed first (a closing tag would catch a wrong name).
    const doc = `<doc xmlns="${NS}" xmlns:ns="${NS}" xmlns:n="${NS}"><url><lxc/><loc>a</loc><lac>b</lac><lxc/><uri>c</uri><loc>d</loc><n:ab/><ns:b>e</ns:b><n:ab>f</n:ab><ns:b/></url><uri/></doc>`;
    const sax = run([doc], 'sax');
    expect(sax.events.filter((e) => e.startsWith('open')).length).toBe(12);
    for (let cut = 1; cut < doc.length; cut++) {
      const fast = run([doc.slice(0, cut), doc.slice(cut)], 'auto');
      expect(fast.fast).toBe(true);
      expect(fast.events).toEqual(sax.events);
    }
  });

  it('under small markup and text limits (sax acts at write boundaries there)', () => {
    fc.assert(
      fc.property(
        xmlDocument(NS).chain((doc) => fc.tuple(fc.constant(doc), pieces(doc))),
        fc.record({
          maxMarkupLength: fc.integer({ min: 8, max: 200 }),
          maxTextLength: fc.integer({ min: 1, max: 200 }),
          maxDepth: fc.integer({ min: 1, max: 6 }),
          maxAttributes: fc.integer({ min: 1, max: 4 }),
          maxErrors: fc.integer({ min: 0, max: 3 }),
        }),
        ([, cut], limits) => {
          const sax = run(cut, 'sax', limits);
          const fast = run(cut, 'auto', limits);
          expect(fast.events).toEqual(sax.events);
          expect(fast.warnings).toEqual(sax.warnings);
          expect(fast.result).toEqual(sax.result);
        },
      ),
      { seed, numRuns: runs(500) },
    );
  });

  it('one character at a time, and long stretches past sax flush size', () => {
    const doc = `<?xml version="1.0"?><doc xmlns="${NS}"><a>${'x&amp;'.repeat(20_000)}</a><!--${'-x'.repeat(40_000)}--><b>${'é'.repeat(70_000)}</b></doc>`;
    const sax = run([doc], 'sax');
    for (const cut of [[...doc.slice(0, 3000)].concat(doc.slice(3000)), cutAt(doc, [5, 70_000, 130_000])]) {
      const fast = run(cut, 'auto');
      expect(fast.events).toEqual(sax.events);
      expect(fast.warnings).toEqual(sax.warnings);
    }
  });
});
