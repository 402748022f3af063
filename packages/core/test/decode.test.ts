import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createDocumentDecoder, declaredEncoding, detectEncoding } from '../src/engine/decode.js';

/** Property runs: `USP_FUZZ_RUNS` for the long `pnpm fuzz` run, else the given default. */
const runs = (fallback: number): number => Number(process.env.USP_FUZZ_RUNS) || fallback;

interface Decoded {
  text: string;
  encoding: string | null;
  warnings: string[];
}

function decode(bytes: Uint8Array, cuts: readonly number[] = []): Decoded {
  const warnings: string[] = [];
  const decoder = createDocumentDecoder((_code, message) => warnings.push(message));
  const points = [0, ...cuts, bytes.length];
  let text = '';
  for (let i = 1; i < points.length; i++) text += decoder.write(bytes.subarray(points[i - 1], points[i]));
  text += decoder.end();
  return { text, encoding: decoder.encoding, warnings };
}

const utf8 = (s: string) => new TextEncoder().encode(s);
const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
function utf16(s: string, bigEndian: boolean, bom: boolean): Uint8Array {
  const units = (bom ? '\uFEFF' : '') + s;
  const out = new Uint8Array(units.length * 2);
  for (let i = 0; i < units.length; i++) {
    const u = units.charCodeAt(i);
    out[2 * i + (bigEndian ? 0 : 1)] = u >> 8;
    out[2 * i + (bigEndian ? 1 : 0)] = u & 0xff;
  }
  return out;
}

const DOC =
  '<?xml version="1.0"?><urlset><url><loc>http://e.com/caf\u00e9/\u65e5\u672c/\ud83d\ude00</loc></url></urlset>';

describe('decode: byte order marks and UTF-16', () => {
  it('decodes UTF-8 and removes its BOM', () => {
    expect(decode(utf8(DOC))).toEqual({ text: DOC, encoding: 'utf-8', warnings: [] });
    expect(decode(new Uint8Array([0xef, 0xbb, 0xbf, ...utf8(DOC)]))).toEqual({
      text: DOC,
      encoding: 'utf-8',
      warnings: [],
    });
  });

  it('decodes UTF-16 LE and BE with a BOM', () => {
    expect(decode(utf16(DOC, false, true))).toMatchObject({ text: DOC, encoding: 'utf-16le' });
    expect(decode(utf16(DOC, true, true))).toMatchObject({ text: DOC, encoding: 'utf-16be' });
  });

  it('detects UTF-16 without a BOM from the pattern of "<"', () => {
    expect(decode(utf16(DOC, false, false))).toMatchObject({ text: DOC, encoding: 'utf-16le' });
    expect(decode(utf16(DOC, true, false))).toMatchObject({ text: DOC, encoding: 'utf-16be' });
    const noDecl = '<urlset/>';
    expect(decode(utf16(noDecl, false, false))).toMatchObject({ text: noDecl, encoding: 'utf-16le' });
  });

  it('warns when a UTF-16 document declares another encoding, and keeps UTF-16', () => {
    const lying = '<?xml version="1.0" encoding="ISO-8859-1"?><a/>';
    const out = decode(utf16(lying, false, true));
    expect(out.text).toBe(lying);
    expect(out.warnings).toHaveLength(1);
    expect(decode(utf16('<?xml version="1.0" encoding="UTF-16"?><a/>', true, false)).warnings).toEqual([]);
  });
});

describe('decode: the declared encoding', () => {
  it('honours a declared single-byte encoding', () => {
    const doc = '<?xml version="1.0" encoding="ISO-8859-1"?><loc>caf\xe9</loc>';
    expect(decode(latin1(doc))).toEqual({ text: doc, encoding: 'windows-1252', warnings: [] });
  });

  it('honours a declared multi-byte encoding (Shift_JIS)', () => {
    // "日本" in Shift_JIS.
    const bytes = new Uint8Array([
      ...latin1("<?xml version='1.0' encoding='Shift_JIS'?><a>"),
      0x93,
      0xfa,
      0x96,
      0x7b,
      ...latin1('</a>'),
    ]);
    expect(decode(bytes).text).toBe("<?xml version='1.0' encoding='Shift_JIS'?><a>\u65e5\u672c</a>");
  });

  it('finds the declaration after leading whitespace and across chunks', () => {
    const doc = '\n  <?xml version="1.0" encoding="windows-1252"?><a>\x80</a>';
    const bytes = latin1(doc);
    for (let cut = 1; cut < 60; cut++) expect(decode(bytes, [cut]).text).toBe(doc.replace('\x80', '\u20ac'));
  });

  it('ignores a declaration of UTF-16 over ASCII-compatible bytes, with a warning', () => {
    const doc = '<?xml version="1.0" encoding="UTF-16"?><a>caf\u00e9</a>';
    const out = decode(utf8(doc));
    expect(out.text).toBe(doc);
    expect(out.encoding).toBe('utf-8');
    expect(out.warnings).toHaveLength(1);
  });

  it('ignores an unknown or unusable label, with a warning', () => {
    for (const label of ['x-no-such-thing', 'UTF-7', 'ISO-2022-KR']) {
      const doc = `<?xml version="1.0" encoding="${label}"?><a>\u00e9</a>`;
      const out = decode(utf8(doc));
      expect(out.text).toBe(doc);
      expect(out.encoding).toBe('utf-8');
      expect(out.warnings).toHaveLength(1);
    }
  });

  it('reads a document declared ASCII as UTF-8 (its superset)', () => {
    const doc = '<?xml version="1.0" encoding="US-ASCII"?><a>\u00e9</a>';
    expect(decode(utf8(doc))).toMatchObject({ text: doc, encoding: 'utf-8', warnings: [] });
  });

  it('lets a UTF-8 BOM win over a declaration, with a warning', () => {
    const doc = '<?xml version="1.0" encoding="ISO-8859-1"?><a>\u00e9</a>';
    const out = decode(new Uint8Array([0xef, 0xbb, 0xbf, ...utf8(doc)]));
    expect(out.text).toBe(doc);
    expect(out.warnings).toHaveLength(1);
  });

  it('looks for the declaration only at the start and within 1 KB', () => {
    expect(detectEncoding(latin1('<a/><?xml version="1.0" encoding="latin1"?>'), true)?.encoding).toBe(
      'utf-8',
    );
    const far = `<?xml version="1.0" ${' '.repeat(2000)} encoding="latin1"?>`;
    expect(detectEncoding(latin1(far), false)?.encoding).toBe('utf-8');
    expect(declaredEncoding(`<?xml version='1.0' encoding = 'koi8-r' ?>`)).toBe('koi8-r');
    expect(declaredEncoding('<a encoding="x"/>')).toBeNull();
  });
});

describe('decode: damage', () => {
  it('replaces invalid UTF-8 with U+FFFD and never throws', () => {
    const bytes = new Uint8Array([0x3c, 0x61, 0x3e, 0xff, 0xc3, 0x28, 0xe2, 0x82, 0x3c, 0x2f, 0x61, 0x3e]);
    expect(decode(bytes).text).toBe('<a>\ufffd\ufffd(\ufffd</a>');
  });

  it('keeps NUL bytes as characters', () => {
    expect(decode(utf8('<a>\0x\0</a>')).text).toBe('<a>\0x\0</a>');
    expect(decode(new Uint8Array(8)).text).toBe('\0'.repeat(8));
  });

  it('ends a cut multi-byte sequence with U+FFFD', () => {
    expect(decode(new Uint8Array([0x61, 0xe6, 0x97])).text).toBe('a\ufffd');
  });

  it('decodes tiny documents (shorter than any signature)', () => {
    expect(decode(new Uint8Array([])).text).toBe('');
    expect(decode(utf8('<')).text).toBe('<');
    expect(decode(new Uint8Array([0xff, 0xfe])).text).toBe('');
    expect(decode(new Uint8Array([0xef, 0xbb])).text).toBe('\ufffd');
  });

  it('gives the same text however the bytes are cut', () => {
    const samples = [
      utf8(DOC),
      new Uint8Array([0xef, 0xbb, 0xbf, ...utf8(DOC)]),
      utf16(DOC, false, true),
      utf16(DOC, true, false),
      latin1('<?xml version="1.0" encoding="ISO-8859-1"?><loc>caf\xe9 \xff</loc>'),
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...samples),
        fc.uniqueArray(fc.integer({ min: 1, max: 200 }), { maxLength: 10 }),
        (bytes, rawCuts) => {
          const cuts = rawCuts.filter((c) => c < bytes.length).sort((a, b) => a - b);
          expect(decode(bytes, cuts)).toEqual(decode(bytes));
        },
      ),
      { seed: 7, numRuns: runs(300) },
    );
    for (const bytes of samples) {
      const ones = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1);
      expect(decode(bytes, ones)).toEqual(decode(bytes));
    }
  });

  it('never throws on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(300), (bytes, cut) => {
        const out = decode(bytes, cut > 0 && cut < bytes.length ? [cut] : []);
        expect(typeof out.text).toBe('string');
      }),
      { seed: 11, numRuns: runs(500) },
    );
  });
});

describe('decode: UTF-8 pieces', () => {
  // Bytes that make every kind of sequence: ASCII, leads of 2, 3 and 4 bytes, continuations,
  // invalid leads (C0, C1, F5-FF), surrogates encoded (ED A0 80) and overlong forms (E0 80, F0 80).
  const byte = fc.oneof(
    fc.integer({ min: 0x20, max: 0x7f }),
    fc.integer({ min: 0x80, max: 0xbf }),
    fc.constantFrom(0xc0, 0xc1, 0xc3, 0xdf, 0xe0, 0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0xa0, 0x90),
  );

  it('gives the text a streaming TextDecoder gives, whatever the bytes and the cuts', () => {
    fc.assert(
      fc.property(fc.array(byte, { maxLength: 40 }), fc.array(fc.nat(40)), (raw, rawCuts) => {
        const bytes = Uint8Array.from([0x3c, 0x61, 0x3e, ...raw]);
        const cuts = [...new Set(rawCuts.map((c) => Math.min(c, bytes.length)))].sort((a, b) => a - b);
        const reference = new TextDecoder();
        const points = [0, ...cuts, bytes.length];
        let expected = '';
        for (let i = 1; i < points.length; i++)
          expected += reference.decode(bytes.subarray(points[i - 1], points[i]), { stream: true });
        expected += reference.decode();
        expect(decode(bytes, cuts).text).toBe(expected);
      }),
      { numRuns: runs(2000), seed: 37 },
    );
  });

  it('keeps a U+FEFF inside the document and drops the byte order mark only', () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...utf8('<a>'), 0xef, 0xbb, 0xbf, ...utf8('</a>')]);
    for (const cut of [1, 3, 4, 6, 7, 8]) expect(decode(bytes, [cut]).text).toBe('<a>\ufeff</a>');
  });

  it('keeps a character cut by every boundary whole', () => {
    const bytes = utf8(DOC);
    for (let cut = 1; cut < bytes.length; cut++) expect(decode(bytes, [cut]).text).toBe(DOC);
    const cuts = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1);
    expect(decode(bytes, cuts).text).toBe(DOC);
  });
});
