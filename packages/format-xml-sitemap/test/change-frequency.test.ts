import { CHANGE_FREQUENCIES } from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { parseChangeFrequency } from '../src/change-frequency.js';

describe('parseChangeFrequency', () => {
  it('accepts the seven values in any case, stripped', () => {
    for (const f of CHANGE_FREQUENCIES) {
      expect(parseChangeFrequency(f)).toBe(f);
      expect(parseChangeFrequency(` ${f.toUpperCase()}\n`)).toBe(f);
    }
    expect(parseChangeFrequency('Weekly')).toBe('weekly');
  });

  it('gives null for an empty value and undefined for an unknown one', () => {
    expect(parseChangeFrequency('')).toBeNull();
    expect(parseChangeFrequency('  \n ')).toBeNull();
    expect(parseChangeFrequency('fortnightly')).toBeUndefined();
    expect(parseChangeFrequency('when we feel like it')).toBeUndefined();
  });
});
