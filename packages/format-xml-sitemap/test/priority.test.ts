import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePriority } from '../src/priority.js';

describe('parsePriority', () => {
  it.each([
    ['0.5', 0.5],
    ['1', 1],
    ['1.0', 1],
    ['0', 0],
    [' 0.30 ', 0.3],
    ['0.55555', 0.55555],
    ['+.7', 0.7],
    ['.7', 0.7],
    ['1.', 1],
    ['7E-1', 0.7],
    ['7e-1', 0.7],
    ['1E-30', 1e-30],
    ['0.1_0', 0.1],
    ['\u0660.\u0667', 0.7],
    ['\uff10.\uff15', 0.5],
    ['10E-1', 1],
    ['0.01E+2', 1],
  ])('accepts %j as %d', (text, expected) => {
    expect(parsePriority(text)).toBe(expected);
  });

  it('reads -0 as a plain zero', () => {
    expect(Object.is(parsePriority('-0'), 0)).toBe(true);
    expect(parsePriority('-0.000')).toBe(0);
  });

  it.each([
    '',
    '   ',
    '-0.1',
    '1.1',
    '1.00000000000000000001',
    '11E-1',
    '2',
    '10',
    'NaN',
    'Infinity',
    '-Infinity',
    'high',
    '0,7',
    '0x1',
    '0b1',
    '.',
    '+',
    '1e',
    '1e+',
    '_1',
    '1_',
    '1__0',
    '0.5 0.6',
    '1E999',
  ])('rejects %j', (text) => {
    expect(parsePriority(text)).toBeNull();
  });
});

describe('parsePriority agrees with Number() on plain decimals', () => {
  it('for any decimal text in [0, 1]', () => {
    const decimal = fc
      .tuple(fc.constantFrom('0', '1', '', '00'), fc.stringMatching(/^[0-9]{0,20}$/))
      .map(([int, frac]) => (frac === '' ? int || '0' : `${int}.${frac}`));
    fc.assert(
      fc.property(decimal, (text) => {
        const n = Number(text);
        expect(parsePriority(text)).toBe(n <= 1 && !/^0*1\.0*[1-9]/.test(text) ? n : null);
      }),
      { seed: 7, numRuns: 2000 },
    );
  });
});
