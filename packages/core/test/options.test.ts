import { describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../src/contract/errors.js';
import { rejectUnknownOptions } from '../src/engine/options.js';

const KNOWN = { maxPages: true, maxDepth: true, concurrency: true, onWarning: true, signal: true };

function rejection(options: object, path?: string): InvalidOptionError | null {
  try {
    rejectUnknownOptions(options, KNOWN, path);
    return null;
  } catch (error) {
    return error as InvalidOptionError;
  }
}

describe('rejectUnknownOptions', () => {
  it('accepts known keys, an empty object and a missing options object', () => {
    expect(rejection({ maxPages: 1, signal: undefined })).toBeNull();
    expect(rejection({})).toBeNull();
    expect(() => rejectUnknownOptions(undefined, KNOWN)).not.toThrow();
  });

  it('names the unknown key and the option it was probably meant to be', () => {
    const e = rejection({ maxPage: 10 });
    expect(e).toBeInstanceOf(InvalidOptionError);
    expect(e?.code).toBe('USP_INVALID_OPTION');
    expect(e?.option).toBe('maxPage');
    expect(e?.message).toBe('Option maxPage: unknown option (did you mean maxPages?)');
    expect(rejection({ maxdepth: 2 })?.message).toContain('did you mean maxDepth?');
    expect(rejection({ concurency: 2 })?.message).toContain('did you mean concurrency?');
  });

  it('suggests nothing for a key unlike every known one, and prefixes nested paths', () => {
    expect(rejection({ bogus: true })?.message).toBe('Option bogus: unknown option');
    expect(rejection({ bogus: true }, 'limits.')?.option).toBe('limits.bogus');
  });
});
