import { describe, expect, it } from 'vitest';
import { feedText } from '../src/engine/feed-entry.js';
import { strippedText } from '../src/engine/text.js';

describe('strippedText', () => {
  it('strips the text and reads an empty or blank one as absent', () => {
    expect(strippedText('  Kettle \n')).toBe('Kettle');
    expect(strippedText('a b')).toBe('a b');
    expect(strippedText('')).toBeNull();
    expect(strippedText(' \t\r\n ')).toBeNull();
  });

  it('is the rule feeds use too', () => {
    expect(feedText).toBe(strippedText);
  });
});
