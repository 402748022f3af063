import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChildRef, Page } from '../src/contract/model.js';
import type { ParseContext, XmlElement, XmlFormat } from '../src/contract/plugin.js';
import { createRegistry } from '../src/contract/registry.js';
import type { Warning } from '../src/contract/warning.js';
import { createXmlEngine, type XmlEngineLimits } from '../src/engine/xml.js';

/** Property runs: `USP_FUZZ_RUNS` for the long `pnpm fuzz` run, else the given default. */
const runs = (fallback: number): number => Number(process.env.USP_FUZZ_RUNS) || fallback;

const NS = 'urn:test:root';
const OTHER = 'urn:test:other';

type Event = string;

/** A format that claims `<doc>` in NS (and `<any>` in any namespace) and records every event. */
function recorder(events: Event[], opts: { throwOn?: string } = {}): XmlFormat {
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
          if (opts.throwOn === el.local) throw new Error(`boom at ${el.local}`);
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
  const attrs = Object.keys(el.attrs).length > 0 ? ` ${JSON.stringify(el.attrs)}` : '';
  return `${el.depth}:{${el.ns}}${el.local}${attrs}`;
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

function run(xml: string | readonly string[], limits: Partial<XmlEngineLimits> = {}, opts = {}) {
  const events: Event[] = [];
  const warnings: Warning[] = [];
  const engine = createXmlEngine({
    url: 'http://example.com/s.xml',
    registry: createRegistry([recorder(events, opts)]),
    ctx: context(warnings),
    limits,
  });
  for (const piece of typeof xml === 'string' ? [xml] : xml) engine.write(piece);
  const result = engine.end();
  return { events, warnings, result, codes: warnings.map((w) => w.code) };
}

describe('xml engine: events', () => {
  it('reports elements below the root with depth, attributes and their own text', () => {
    const { events, result } = run(
      `<?xml version="1.0"?><doc xmlns="${NS}" a="1"><item id="x"><name>A &amp; B</name><empty/></item></doc>`,
    );
    expect(events).toEqual([
      `root 0:{${NS}}doc {"xmlns":"${NS}","a":"1"}`,
      `open 1:{${NS}}item {"id":"x"}`,
      `open 2:{${NS}}name`,
      `close 2:{${NS}}name "A & B"`,
      `open 2:{${NS}}empty`,
      `close 2:{${NS}}empty ""`,
      `close 1:{${NS}}item {"id":"x"} ""`,
      'end false',
    ]);
    expect(result).toEqual({
      outcome: { type: 'PagesXMLSitemap' },
      truncated: false,
      format: 'recorder',
      root: { ns: 'urn:test:root', local: 'doc' },
    });
  });

  it('keeps the first of a repeated attribute, and each element only its own attributes', () => {
    // sax's duplicate check reads the tag's attributes and its held-back list (xml.ts
    // NoAttribList): the engine gives it a list that never holds anything.
    const { events, codes } = run(
      `<doc xmlns="${NS}"><e a="1" a="2" b="3"/><e a="4"/><e/><f xmlns:p="${OTHER}" p:a="5" p:a="6"/></doc>`,
    );
    expect(events).toEqual([
      `root 0:{${NS}}doc {"xmlns":"${NS}"}`,
      `open 1:{${NS}}e {"a":"1","b":"3"}`,
      `close 1:{${NS}}e {"a":"1","b":"3"} ""`,
      `open 1:{${NS}}e {"a":"4"}`,
      `close 1:{${NS}}e {"a":"4"} ""`,
      `open 1:{${NS}}e`,
      `close 1:{${NS}}e ""`,
      `open 1:{${NS}}f {"xmlns:p":"${OTHER}","p:a":"5"}`,
      `close 1:{${NS}}f {"xmlns:p":"${OTHER}","p:a":"5"} ""`,
      'end false',
    ]);
    expect(codes).toEqual([]);
  });

  it('gives close the text since the last tag: CDATA included, comments skipped, entities decoded once', () => {
    const { events } = run(
      `<doc xmlns="${NS}"><a>x<!-- c -->y<![CDATA[<z>&amp;]]>&amp;amp;&#233;&#x41;</a><b>lead<c/>tail</b></doc>`,
    );
    expect(events).toContain(`close 1:{${NS}}a "xy<z>&amp;&amp;éA"`);
    // Text before an empty element does not leak into it; the parent gets what follows it.
    expect(events).toContain(`close 2:{${NS}}c ""`);
    expect(events).toContain(`close 1:{${NS}}b "tail"`);
  });

  it('does not expand HTML entities (XML has five) and recovers from them', () => {
    const { events, codes } = run(`<doc xmlns="${NS}"><a>&nbsp;&copy;x</a></doc>`);
    expect(events).toContain(`close 1:{${NS}}a "&nbsp;&copy;x"`);
    expect(codes).toContain('malformed-xml');
  });

  it('recovers from an unescaped & in a URL (common in the wild)', () => {
    const { events, result } = run(`<doc xmlns="${NS}"><loc>http://e.com/?a=1&b=2</loc><loc>ok</loc></doc>`);
    expect(events).toContain(`close 1:{${NS}}loc "http://e.com/?a=1&b=2"`);
    expect(events).toContain(`close 1:{${NS}}loc "ok"`);
    expect(result.truncated).toBe(false);
  });

  it('ignores what follows the root close, with one warning', () => {
    const events: Event[] = [];
    const warnings: Warning[] = [];
    const engine = createXmlEngine({
      url: 'http://e/',
      registry: createRegistry([recorder(events)]),
      ctx: context(warnings),
    });
    engine.write(`<doc xmlns="${NS}"><a/></doc>\n`);
    expect(engine.done).toBe(false);
    engine.write('<another-root/> garbage <<<');
    expect(engine.done).toBe(true);
    expect(engine.end().truncated).toBe(false);
    expect(events.some((e) => e.includes('another-root'))).toBe(false);
    expect(warnings.map((w) => w.code)).toEqual(['malformed-xml']);
  });
});

describe('xml engine: namespaces', () => {
  it('resolves by URI, never by prefix', () => {
    const a = run(`<doc xmlns="${NS}" xmlns:o="${OTHER}"><o:x>1</o:x><y>2</y></doc>`).events;
    const b = run(`<r:doc xmlns:r="${NS}" xmlns="${OTHER}"><x>1</x><r:y>2</r:y></r:doc>`).events;
    const strip = (events: Event[]) => events.slice(1);
    expect(strip(a)).toEqual(strip(b));
    expect(strip(a)).toContain(`close 1:{${OTHER}}x "1"`);
    expect(strip(a)).toContain(`close 1:{${NS}}y "2"`);
  });

  it('scopes declarations to their element and restores the outer binding', () => {
    const { events } = run(
      `<doc xmlns="${NS}" xmlns:p="${OTHER}"><p:a xmlns:p="urn:inner"><p:b/></p:a><p:c/><d xmlns=""><e/></d><f/></doc>`,
    );
    expect(events).toContain('open 1:{urn:inner}a {"xmlns:p":"urn:inner"}');
    expect(events).toContain('open 2:{urn:inner}b');
    expect(events).toContain(`open 1:{${OTHER}}c`);
    expect(events).toContain('open 1:{}d {"xmlns":""}');
    expect(events).toContain('open 2:{}e');
    expect(events).toContain(`open 1:{${NS}}f`);
  });

  it('resolves a name seen before under the binding in force where it appears again', () => {
    const { events } = run(
      `<doc xmlns="${NS}" xmlns:p="${OTHER}"><p:x/><q xmlns:p="urn:inner"><p:x/></q><p:x/><r xmlns:p=""><p:x/></r><p:x/></doc>`,
    );
    expect(events.filter((e) => e.startsWith('open') && e.endsWith('x'))).toEqual([
      `open 1:{${OTHER}}x`,
      'open 2:{urn:inner}x',
      `open 1:{${OTHER}}x`,
      'open 2:{}p:x',
      `open 1:{${OTHER}}x`,
    ]);
  });

  it('resolves every prefixed name of a document with more distinct names than it remembers', () => {
    const names = Array.from({ length: 600 }, (_, i) => `p:n${i % 300}`);
    const { events } = run(
      `<doc xmlns="${NS}" xmlns:p="${OTHER}">${names.map((n) => `<${n}/>`).join('')}</doc>`,
    );
    const opened = events.filter((e) => e.startsWith('open'));
    expect(opened).toHaveLength(600);
    expect(opened[599]).toBe(`open 1:{${OTHER}}n299`);
    expect(opened.every((e) => e.startsWith(`open 1:{${OTHER}}n`))).toBe(true);
  });

  it('reports an undeclared prefix as a no-namespace element named as written, with one warning', () => {
    const { events, warnings } = run(
      `<doc xmlns="${NS}"><image:loc>a</image:loc><image:loc>b</image:loc></doc>`,
    );
    expect(events).toContain('close 1:{}image:loc "a"');
    expect(warnings.filter((w) => w.code === 'missing-namespace')).toHaveLength(1);
  });

  it('knows the xml prefix', () => {
    const { events } = run(`<doc xmlns="${NS}"><xml:a/></doc>`);
    expect(events).toContain('open 1:{http://www.w3.org/XML/1998/namespace}a');
  });

  it('matches a root claimed in any namespace', () => {
    expect(run('<any/>').events[0]).toBe('root 0:{}any');
    expect(run(`<q:any xmlns:q="${OTHER}"/>`).events[0]).toBe(`root 0:{${OTHER}}any {"xmlns:q":"${OTHER}"}`);
  });
});

describe('xml engine: refusals and limits', () => {
  it('names an unclaimed root element and its namespace', () => {
    expect(run('<html><body/></html>').result.outcome).toEqual({
      type: 'InvalidSitemap',
      reason: 'No parsers support sitemap from http://example.com/s.xml: unsupported root element <html>',
    });
    expect(run(`<x:feed xmlns:x="${OTHER}"/>`).result.outcome.reason).toBe(
      `No parsers support sitemap from http://example.com/s.xml: unsupported root element <x:feed> in namespace ${OTHER}`,
    );
    expect(run('').result.outcome.reason).toBe(
      'No parsers support sitemap from http://example.com/s.xml: no root element',
    );
  });

  it('refuses a DOCTYPE before the root (billion laughs)', () => {
    const lol = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><doc xmlns="${NS}">&lol2;</doc>`;
    const { result, codes, events } = run(lol);
    expect(result.outcome.type).toBe('InvalidSitemap');
    expect(result.outcome.reason).toMatch(
      /^No parsers support sitemap from http:\/\/example\.com\/s\.xml: .*DOCTYPE/,
    );
    expect(codes).toEqual(['doctype-refused']);
    expect(events).toEqual([]);
  });

  it('refuses external entities without reading them', () => {
    const xxe = `<!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd"><!ENTITY y SYSTEM "http://127.0.0.1:1/">]><doc xmlns="${NS}"><a>&x;&y;</a></doc>`;
    const { result, codes } = run(xxe);
    expect(result.outcome.type).toBe('InvalidSitemap');
    expect(codes).toContain('doctype-refused');
  });

  it('refuses an ENTITY declaration outside a DOCTYPE', () => {
    const { result, codes } = run(`<!ENTITY x "y"><doc xmlns="${NS}"/>`);
    expect(result.outcome.type).toBe('InvalidSitemap');
    expect(codes).toContain('doctype-refused');
  });

  it('stops at a DOCTYPE inside the document, keeping what came before', () => {
    const { events, result, codes } = run(`<doc xmlns="${NS}"><a>1</a><!DOCTYPE x><b>2</b></doc>`);
    expect(events).toEqual([
      `root 0:{${NS}}doc {"xmlns":"${NS}"}`,
      `open 1:{${NS}}a`,
      `close 1:{${NS}}a "1"`,
      'end true',
    ]);
    expect(result.truncated).toBe(true);
    expect(codes).toContain('doctype-refused');
  });

  it('stops at the first piece of a huge DOCTYPE instead of buffering it', () => {
    const engine = createXmlEngine({
      url: 'http://e/',
      registry: createRegistry([recorder([])]),
      ctx: context([]),
    });
    engine.write('<?xml version="1.0"?><!DOCTYPE x [');
    expect(engine.done).toBe(true);
    const piece = '<!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaa">'.repeat(1000);
    for (let i = 0; i < 100; i++) engine.write(piece);
    expect(engine.end().outcome.type).toBe('InvalidSitemap');
  });

  it('stops below maxDepth with a limit warning and ends the handler as truncated', () => {
    const deep = `<doc xmlns="${NS}"><ok>1</ok>${'<n>'.repeat(100_000)}`;
    const { events, result, codes } = run(deep, { maxDepth: 50 });
    expect(events).toContain(`close 1:{${NS}}ok "1"`);
    expect(events.filter((e) => e.startsWith('open'))).toHaveLength(50);
    expect(events.at(-1)).toBe('end true');
    expect(result.truncated).toBe(true);
    expect(codes).toContain('limit');
  });

  it('caps character data per element and drops the rest with a warning', () => {
    const big = 'x'.repeat(300_000);
    const { events, codes } = run([`<doc xmlns="${NS}"><loc>`, big, big, `</loc><next>n</next></doc>`], {
      maxTextLength: 100_000,
    });
    const close = events.find((e) => e.startsWith(`close 1:{${NS}}loc`)) as string;
    expect(close).toBe(`close 1:{${NS}}loc ${JSON.stringify('x'.repeat(100_000))}`);
    expect(events).toContain(`close 1:{${NS}}next "n"`);
    expect(codes.filter((c) => c === 'limit')).toHaveLength(1);
  });

  it('stops on a markup token over the cap (an attribute value longer than the cap)', () => {
    const { result, codes } = run([`<doc xmlns="${NS}"><a v="`, 'v'.repeat(300_000), '"/></doc>'], {
      maxMarkupLength: 100_000,
    });
    expect(result.truncated).toBe(true);
    expect(codes).toContain('limit');
  });

  it('stops on too many attributes', () => {
    const attrs = Array.from({ length: 50 }, (_, i) => ` a${i}="1"`).join('');
    const { result, codes } = run(`<doc xmlns="${NS}"><e${attrs}/></doc>`, { maxAttributes: 20 });
    expect(result.truncated).toBe(true);
    expect(codes).toContain('limit');
  });

  it('gives up on a document that is mostly damage', () => {
    const { result, warnings } = run(`<doc xmlns="${NS}">${'&&&&<<>>'.repeat(5000)}</doc>`, {
      maxErrors: 100,
    });
    expect(result.truncated).toBe(true);
    expect(warnings.some((w) => /^Too many XML syntax errors/.test(w.message))).toBe(true);
    // Warnings about individual errors are capped.
    expect(warnings.filter((w) => w.message.startsWith('XML syntax error')).length).toBeLessThanOrEqual(10);
  });

  it('ends a cut document as truncated with a warning', () => {
    const { events, result, codes } = run(`<doc xmlns="${NS}"><a>1</a><a>2`);
    expect(events).toEqual([
      `root 0:{${NS}}doc {"xmlns":"${NS}"}`,
      `open 1:{${NS}}a`,
      `close 1:{${NS}}a "1"`,
      `open 1:{${NS}}a`,
      'end true',
    ]);
    expect(result.truncated).toBe(true);
    expect(codes).toEqual(['truncated']);
  });

  it('turns a throwing handler into a plugin-error warning', () => {
    const { result, codes, events } = run(`<doc xmlns="${NS}"><a/><b/><c/></doc>`, {}, { throwOn: 'b' });
    expect(events).toContain('end true');
    expect(result.truncated).toBe(true);
    expect(codes).toContain('plugin-error');
  });

  it('stop() ends the handler as truncated', () => {
    const events: Event[] = [];
    const engine = createXmlEngine({
      url: 'http://e/',
      registry: createRegistry([recorder(events)]),
      ctx: context([]),
    });
    engine.write(`<doc xmlns="${NS}"><a/>`);
    engine.stop();
    engine.write('<b/></doc>');
    expect(engine.end().truncated).toBe(true);
    expect(events.at(-1)).toBe('end true');
  });
});

describe('xml engine: chunking', () => {
  const doc = `<?xml version="1.0" encoding="UTF-8"?>\n<doc xmlns="${NS}" xmlns:o="${OTHER}">\n  <o:item k="v&amp;w">caf\u00e9 &lt;1&gt; <![CDATA[c]]d]]></o:item>\n  <!-- note --><e/>\n  <x>\ud83d\ude00</x>\n</doc>\n`;
  it('gives the same events however the text is cut', () => {
    const whole = run(doc);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: doc.length - 1 }), { maxLength: 12 }), (cuts) => {
        const points = [0, ...[...cuts].sort((a, b) => a - b), doc.length];
        const pieces = points.slice(1).map((end, i) => doc.slice(points[i], end));
        const cut = run(pieces);
        expect(cut.events).toEqual(whole.events);
        expect(cut.warnings).toEqual(whole.warnings);
      }),
      { seed: 20240501, numRuns: runs(200) },
    );
    const oneByOne = run([...doc]);
    expect(oneByOne.events).toEqual(whole.events);
  });
});
