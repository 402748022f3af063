import { describe, expect, it } from 'vitest';
import { resolveFeedLink } from '../src/engine/feed-url.js';

describe('resolveFeedLink', () => {
  const base = 'https://example.com/feeds/main.xml';

  it('keeps an absolute http(s) link as written, stripped', () => {
    expect(resolveFeedLink('  http://Example.com/a?b=1#c \n', base)).toEqual({
      url: 'http://Example.com/a?b=1#c',
      relative: false,
    });
    expect(resolveFeedLink('HTTPS://example.org/x', base)).toEqual({
      url: 'HTTPS://example.org/x',
      relative: false,
    });
  });

  it('resolves relative references against the base', () => {
    expect(resolveFeedLink('/root', base)).toEqual({ url: 'https://example.com/root', relative: true });
    expect(resolveFeedLink('sibling', base)).toEqual({
      url: 'https://example.com/feeds/sibling',
      relative: true,
    });
    expect(resolveFeedLink('//cdn.example.org/p', base)).toEqual({
      url: 'https://cdn.example.org/p',
      relative: true,
    });
    expect(resolveFeedLink('?q=1', base)).toEqual({
      url: 'https://example.com/feeds/main.xml?q=1',
      relative: true,
    });
  });

  it('refuses empty links, other schemes and what cannot be resolved', () => {
    for (const link of [
      '',
      '   ',
      'ftp://example.com/f',
      'javascript:alert(1)',
      'mailto:a@b.c',
      'http:/x.com',
      'http://x',
    ]) {
      expect(resolveFeedLink(link, base), link).toBeNull();
    }
    expect(resolveFeedLink('relative', 'not a base')).toBeNull();
  });
});
