import type { RobotsGroup } from '@usp-ts/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compilePattern, normaliseRobotsPath, productToken, RobotsRuleSet } from '../src/index.js';

function rules(...groups: [string[], string[], number?][]): RobotsRuleSet {
  const gs: RobotsGroup[] = groups.map(([userAgents, lines, crawlDelay]) => ({
    userAgents,
    rules: lines.map((l) => {
      const [k, ...rest] = l.split(' ');
      return { allow: k === 'allow', path: rest.join(' ') };
    }),
    crawlDelay: crawlDelay ?? null,
  }));
  return new RobotsRuleSet(gs);
}

const allowed = (r: RobotsRuleSet, path: string, ua = 'bot') => r.isAllowed(`https://example.com${path}`, ua);

describe('matching (RFC 9309 2.2.2)', () => {
  it('the longest matching pattern wins, whatever the order', () => {
    const r = rules([
      ['*'],
      ['disallow /example/page', 'allow /example/page/', 'disallow /example/page/disallowed.gif'],
    ]);
    expect(allowed(r, '/example/page')).toBe(false);
    expect(allowed(r, '/example/page/')).toBe(true);
    expect(allowed(r, '/example/page/a.html')).toBe(true);
    expect(allowed(r, '/example/page/disallowed.gif')).toBe(false);
    expect(allowed(r, '/other')).toBe(true);
  });

  it('allow wins a tie', () => {
    expect(allowed(rules([['*'], ['disallow /page', 'allow /page']]), '/page')).toBe(true);
    expect(allowed(rules([['*'], ['allow /page', 'disallow /page']]), '/page')).toBe(true);
    // Google's example: `/page` (allow) and `/*.htm` (disallow) are equally long... but `/*.htm` is longer.
    const g = rules([['*'], ['allow /page', 'disallow /*.ph']]);
    expect(allowed(g, '/page.php5')).toBe(true);
  });

  it('* matches any run and a final $ anchors (Google examples)', () => {
    const r = rules([['*'], ['disallow /*.php$', 'disallow /fish*.php', 'allow /$', 'disallow /']]);
    expect(allowed(r, '/')).toBe(true);
    expect(allowed(r, '/index.php')).toBe(false);
    expect(allowed(r, '/filename.php?parameters')).toBe(false); // `/` disallows; `.php$` does not match
    expect(allowed(r, '/fishheads/catfish.php?parameters')).toBe(false);
    expect(allowed(r, '/page.html')).toBe(false);
    const only = rules([['*'], ['disallow /*.php$']]);
    expect(allowed(only, '/a.php')).toBe(false);
    expect(allowed(only, '/a.php?x')).toBe(true);
    expect(allowed(only, '/a.php5')).toBe(true);
    expect(allowed(only, '/windows.PHP')).toBe(true); // paths are case-sensitive
  });

  it('a $ that is not last is an ordinary character', () => {
    const r = rules([['*'], ['disallow /a$b']]);
    expect(allowed(r, '/a$b/c')).toBe(false);
    expect(allowed(r, '/ab')).toBe(true);
  });

  it('an empty Disallow matches nothing', () => {
    expect(allowed(rules([['*'], ['disallow ']]), '/anything')).toBe(true);
  });

  it('matches the query too', () => {
    const r = rules([['*'], ['disallow /*?sessionid=']]);
    expect(allowed(r, '/a?sessionid=1')).toBe(false);
    expect(allowed(r, '/a?x=1')).toBe(true);
  });

  it('normalises percent-encoding on both sides', () => {
    const r = rules([
      ['*'],
      ['disallow /foo/bar?baz=http://foo.bar', 'disallow /a%3cd', 'disallow /%7Ejoe', 'disallow /ü/'],
    ]);
    expect(allowed(r, '/foo/bar?baz=http://foo.bar')).toBe(false);
    expect(allowed(r, '/a%3Cd')).toBe(false);
    expect(allowed(r, '/~joe/index.html')).toBe(false);
    expect(allowed(r, '/%7ejoe/index.html')).toBe(false);
    expect(allowed(r, '/%C3%BC/x')).toBe(false);
    expect(allowed(r, '/ü/x')).toBe(false);
    expect(normaliseRobotsPath('/a%2fb%7e%41/é\ud800')).toBe('/a%2Fb~A/%C3%A9%EF%BF%BD');
  });

  it('always allows /robots.txt', () => {
    expect(allowed(rules([['*'], ['disallow /']]), '/robots.txt')).toBe(true);
    expect(allowed(rules([['*'], ['disallow /']]), '/robots.txt?x')).toBe(false);
  });

  it('reads a pattern without a leading slash as starting at the root', () => {
    expect(allowed(rules([['*'], ['disallow private']]), '/private/x')).toBe(false);
  });

  it('accepts a bare path and ignores the fragment', () => {
    const r = rules([['*'], ['disallow /a$']]);
    expect(r.isAllowed('/a', 'bot')).toBe(false);
    expect(r.isAllowed('/a#frag', 'bot')).toBe(false);
    expect(r.isAllowed('https://example.com/a#frag', 'bot')).toBe(false);
  });

  it('compilePattern agrees with a regex reading of the pattern', () => {
    const chars = fc.constantFrom('a', 'b', '/', '*', '.');
    fc.assert(
      fc.property(
        fc.string({ unit: chars, maxLength: 8 }),
        fc.boolean(),
        fc.string({ unit: fc.constantFrom('a', 'b', '/', '.'), maxLength: 12 }),
        (body, anchored, path) => {
          const pattern = anchored ? `${body}$` : body;
          const source = body.replace(/[.*+?^${}()|[\]\\/]/g, (c) => (c === '*' ? '.*' : `\\${c}`));
          const re = new RegExp(`^${source}${anchored ? '$' : ''}`, 's');
          expect(compilePattern(pattern)(path)).toBe(re.test(path));
        },
      ),
      { numRuns: 5000 },
    );
  }, 60_000);
});

describe('group choice (RFC 9309 2.2.1)', () => {
  const r = rules(
    [['googlebot-news'], ['disallow /news-only']],
    [['googlebot'], ['disallow /google-only'], 5],
    [['*'], ['disallow /everyone']],
    [['GoogleBot'], ['disallow /second-googlebot-group']],
  );

  it('matches the product token case-insensitively and merges groups naming it', () => {
    expect(allowed(r, '/google-only', 'Googlebot')).toBe(false);
    expect(allowed(r, '/second-googlebot-group', 'GOOGLEBOT')).toBe(false);
    expect(allowed(r, '/everyone', 'Googlebot')).toBe(true); // a named group replaces *
  });

  it('takes the most specific token: googlebot-news gets its own group, googlebot-image falls back', () => {
    expect(allowed(r, '/news-only', 'Googlebot-News')).toBe(false);
    expect(allowed(r, '/google-only', 'Googlebot-News')).toBe(true);
    expect(allowed(r, '/google-only', 'Googlebot-Image/1.0')).toBe(false);
    expect(allowed(r, '/news-only', 'Googlebot-Image')).toBe(true);
  });

  it('reads the product token from a full user-agent string', () => {
    expect(productToken('Googlebot/2.1 (+http://www.google.com/bot.html)')).toBe('googlebot');
    expect(productToken('  My_Bot-x 1.0')).toBe('my_bot-x');
    expect(allowed(r, '/google-only', 'Googlebot/2.1 (+http://www.google.com/bot.html)')).toBe(false);
  });

  it('falls back to * and, without *, allows everything', () => {
    expect(allowed(r, '/everyone', 'otherbot')).toBe(false);
    expect(allowed(r, '/everyone', '')).toBe(false);
    expect(allowed(rules([['a'], ['disallow /']]), '/x', 'b')).toBe(true);
    expect(allowed(rules(), '/x', 'b')).toBe(true);
  });

  it('reads a group token like Google: prefix before / and spaces; a prefix is not a match', () => {
    const g = rules([['Foo/1.0'], ['disallow /a']], [['foobar'], ['disallow /b']]);
    expect(allowed(g, '/a', 'foo')).toBe(false);
    expect(allowed(g, '/b', 'foo')).toBe(true);
    expect(allowed(g, '/a', 'foob')).toBe(true);
    expect(allowed(g, '/b', 'FooBar')).toBe(false);
  });

  it('gives the crawl-delay of the chosen group', () => {
    expect(r.crawlDelay('googlebot')).toBe(5);
    expect(r.crawlDelay('googlebot-image')).toBe(5);
    expect(r.crawlDelay('googlebot-news')).toBeNull();
    expect(r.crawlDelay('other')).toBeNull();
  });
});
