import fc from 'fast-check';

/** Markup fragments that stress parsers when spliced into a document at random. */
const TOKENS = [
  '<',
  '>',
  '&',
  '</',
  '/>',
  '<!DOCTYPE x>',
  '<!DOCTYPE x [<!ENTITY a "b">]>',
  '<!ENTITY e SYSTEM "file:///etc/passwd">',
  '&e;',
  '<![CDATA[',
  ']]>',
  '<!--',
  '-->',
  '<?xml version="1.0" encoding="UTF-16"?>',
  '<?pi x?>',
  '"',
  "'",
  '\0',
  '\uFEFF',
  '&amp;',
  '&#x0;',
  '&#1114112;',
  '&nbsp;',
  ' xmlns="urn:x"',
  ' xmlns:a="urn:y"',
  '<a:b>',
  '</a:b>',
  '<p:q xmlns:p="">',
  '\n',
  '\r\n',
  '\r',
  '\u2028',
  'http://',
  'https://example.com/x',
  'Sitemap: http://example.com/s.xml\n',
  ' ',
  '<url>',
  '</url>',
  '<loc>',
  '</loc>',
  '\ud800',
  '\ufffd',
].map((t) => new TextEncoder().encode(t));

export type Edit =
  | { kind: 'delete'; at: number; length: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'duplicate'; at: number; length: number }
  | { kind: 'flip'; at: number; bit: number }
  | { kind: 'truncate'; at: number };

export function editArbitrary(): fc.Arbitrary<Edit> {
  const at = fc.nat();
  return fc.oneof(
    fc.record({ kind: fc.constant('delete' as const), at, length: fc.integer({ min: 1, max: 64 }) }),
    fc.record({
      kind: fc.constant('insert' as const),
      at,
      bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }),
    }),
    fc.record({ kind: fc.constant('insert' as const), at, bytes: fc.constantFrom(...TOKENS) }),
    fc.record({ kind: fc.constant('insert' as const), at, bytes: fc.constantFrom(...TOKENS) }),
    fc.record({ kind: fc.constant('duplicate' as const), at, length: fc.integer({ min: 1, max: 200 }) }),
    fc.record({ kind: fc.constant('flip' as const), at, bit: fc.integer({ min: 0, max: 7 }) }),
    fc.record({ kind: fc.constant('truncate' as const), at }),
  );
}

/** Applies edits in order; positions wrap around the current length. */
export function applyEdits(input: Uint8Array, edits: readonly Edit[]): Uint8Array {
  let bytes = input;
  for (const edit of edits) {
    const n = bytes.length;
    const at = n === 0 ? 0 : edit.at % (n + 1);
    switch (edit.kind) {
      case 'delete':
        bytes = concat(bytes.subarray(0, at), bytes.subarray(Math.min(n, at + edit.length)));
        break;
      case 'insert':
        bytes = concat(bytes.subarray(0, at), edit.bytes, bytes.subarray(at));
        break;
      case 'duplicate': {
        const piece = bytes.subarray(at, Math.min(n, at + edit.length));
        bytes = concat(bytes.subarray(0, at), piece, piece, bytes.subarray(at + piece.length));
        break;
      }
      case 'flip':
        if (at < n) {
          bytes = bytes.slice();
          bytes[at] ^= 1 << edit.bit;
        }
        break;
      case 'truncate':
        bytes = bytes.subarray(0, at);
        break;
    }
  }
  return bytes;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
