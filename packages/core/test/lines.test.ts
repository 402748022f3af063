import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../src/contract/errors.js';
import { createLineSplitter, isPythonSpace, pythonStrip } from '../src/engine/lines.js';

function split(pieces: string[], maxLineLength?: number): { line: string; truncated: boolean }[] {
  const out: { line: string; truncated: boolean }[] = [];
  const s = createLineSplitter((line, truncated) => out.push({ line, truncated }), { maxLineLength });
  for (const p of pieces) s.write(p);
  s.end();
  return out;
}
const lines = (pieces: string[]): string[] => split(pieces).map((l) => l.line);

/** Python's str.splitlines(), written out as the reference for the property test. */
function splitlinesReference(text: string): string[] {
  const out: string[] = [];
  let line = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if ('\n\v\f\r\x1c\x1d\x1e\x85\u2028\u2029'.includes(c)) {
      out.push(line);
      line = '';
      if (c === '\r' && text[i + 1] === '\n') i++;
    } else {
      line += c;
    }
  }
  if (line !== '') out.push(line);
  return out;
}

describe('createLineSplitter', () => {
  it('splits like Python str.splitlines()', () => {
    expect(lines(['a\nb\r\nc\rd\ve\ff\x1cg\x1dh\x1ei\x85j\u2028k\u2029l'])).toEqual([...'abcdefghijkl']);
    expect(lines(['a\n\nb\n'])).toEqual(['a', '', 'b']);
    expect(lines(['\n'])).toEqual(['']);
    expect(lines([''])).toEqual([]);
    expect(lines(['a\tb\x1fc'])).toEqual(['a\tb\x1fc']); // \x1f is whitespace in Python but no line break
  });

  it('counts a \\r\\n split across pieces once', () => {
    expect(lines(['a\r', '\nb'])).toEqual(['a', 'b']);
    expect(lines(['a\r', '', '\nb'])).toEqual(['a', 'b']);
    expect(lines(['a\r', '\rb'])).toEqual(['a', '', 'b']);
    expect(lines(['a', 'b\r'])).toEqual(['ab']);
  });

  it('joins a line split across pieces', () => {
    expect(lines(['ht', 'tp://x', '.com/\nnext'])).toEqual(['http://x.com/', 'next']);
  });

  it('matches splitlines() for any text cut into any pieces', () => {
    const alphabet = fc.constantFrom('a', 'b', '\n', '\r', '\v', '\x1c', '\x85', '\u2028', ' ');
    fc.assert(
      fc.property(fc.array(fc.string({ unit: alphabet, maxLength: 12 }), { maxLength: 8 }), (pieces) => {
        expect(lines(pieces)).toEqual(splitlinesReference(pieces.join('')));
      }),
      { numRuns: 3000 },
    );
  }, 60_000);

  it('caps a line: keeps its start, drops the rest without buffering it, and says so', () => {
    const long = 'x'.repeat(10);
    expect(split([`${long}\nok\n`], 4)).toEqual([
      { line: 'xxxx', truncated: true },
      { line: 'ok', truncated: false },
    ]);
    expect(split(['xx', 'xx', 'xx', 'x\nab', 'c'], 4)).toEqual([
      { line: 'xxxx', truncated: true },
      { line: 'abc', truncated: false },
    ]);
    expect(split(['abcd\n'], 4)).toEqual([{ line: 'abcd', truncated: false }]);
    expect(split(['abcde'], 4)).toEqual([{ line: 'abcd', truncated: true }]);
  });

  it('holds no more than the cap of a 10 MB single line', () => {
    const got: string[] = [];
    const s = createLineSplitter((line) => got.push(line));
    const piece = 'y'.repeat(65_536);
    for (let i = 0; i < 160; i++) s.write(piece);
    s.write('\nlast');
    s.end();
    expect(got.map((l) => l.length)).toEqual([65_536, 4]);
  });

  it('drops the unterminated last line when asked (a body that broke off)', () => {
    const got: string[] = [];
    const s = createLineSplitter((line) => got.push(line));
    s.write('http://a.com/1\nhttp://a.com/2\nhttp://a.c');
    s.end(true);
    expect(got).toEqual(['http://a.com/1', 'http://a.com/2']);
  });

  it('checks its option', () => {
    expect(() => createLineSplitter(() => {}, { maxLineLength: 0 })).toThrow(InvalidOptionError);
    expect(() => createLineSplitter(() => {}, { maxLineLength: 1.5 })).toThrow(InvalidOptionError);
  });

  it('lets a listener feed another splitter', () => {
    const inner: string[] = [];
    const innerSplitter = createLineSplitter((l) => inner.push(l));
    const outer = createLineSplitter((l) => innerSplitter.write(`${l}\n`));
    outer.write('a\nb\nc');
    outer.end();
    innerSplitter.end();
    expect(inner).toEqual(['a', 'b', 'c']);
  });
});

describe('pythonStrip', () => {
  it('strips what Python strips', () => {
    expect(pythonStrip(' \t\x1c\x1f\x85\u3000a b\u2029 ')).toBe('a b');
    expect(pythonStrip('\ufeffa')).toBe('\ufeffa');
    expect(isPythonSpace(0xfeff)).toBe(false);
    expect(isPythonSpace(0x1f)).toBe(true);
  });
});
