import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidUrlError } from '../src/contract/errors.js';
import {
  isHttpUrl,
  normalisePercentEncoding,
  resolveUrl,
  stripUrlToHomepage,
  unfetchableUrl,
  urlKey,
} from '../src/engine/url.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const helpersDir = join(
  process.env.USP_SHARED_DIR ?? join(repoRoot, '..', 'shared'),
  'conformance',
  'helpers',
);
const haveHelpers = existsSync(helpersDir);
if (!haveHelpers)
  console.warn(`[url.test] skipping usp URL tables: ${helpersDir} not found (set USP_SHARED_DIR)`);

function table<T>(name: string): { input: string | null; result: T }[] {
  return haveHelpers ? JSON.parse(readFileSync(join(helpersDir, name), 'utf8')).cases : [];
}

describe.skipIf(!haveHelpers)('usp helper tables', () => {
  it('isHttpUrl matches every row of is_http_url.json', () => {
    const rows = table<boolean>('is_http_url.json');
    expect(rows.length).toBeGreaterThan(40);
    const wrong = rows.filter((r) => isHttpUrl(r.input as string) !== r.result);
    expect(wrong).toEqual([]);
  });

  /** Rows where we deliberately differ: a homepage without a host is a caller mistake. */
  const STRIP_EXCEPTIONS: Record<string, string> = {
    'http:///x': 'usp returns "http:///"; we throw InvalidUrlError because there is no host',
  };

  it('stripUrlToHomepage matches strip_url_to_homepage.json except the listed rows', () => {
    const rows = table<string | { raises: string }>('strip_url_to_homepage.json');
    expect(rows.length).toBeGreaterThan(10);
    for (const row of rows) {
      const input = row.input as string;
      if (typeof row.result === 'object' || input in STRIP_EXCEPTIONS) {
        expect(() => stripUrlToHomepage(input), String(input)).toThrow(InvalidUrlError);
      } else {
        expect(stripUrlToHomepage(input), input).toBe(row.result);
      }
    }
  });
});

describe('isHttpUrl', () => {
  it('uses Python whitespace, not JavaScript whitespace', () => {
    expect(isHttpUrl('http://example.com/a\x1cb')).toBe(false); // Python \s, not JS \s
    expect(isHttpUrl('http://example.com/a\ufeffb')).toBe(true); // JS \s, not Python \s
    expect(isHttpUrl('http://example.com/a\u3000b')).toBe(false);
  });

  it('refuses a netloc Python urlsplit refuses', () => {
    expect(isHttpUrl('http://[::1/')).toBe(false);
    expect(isHttpUrl('http://a]b.com/')).toBe(false);
    // U+FF03 FULLWIDTH NUMBER SIGN normalises (NFKC) to `#`: urlsplit raises.
    expect(isHttpUrl('http://ex\uff03ample.com/')).toBe(false);
  });

  it('agrees with usp regex + urlsplit written out literally', () => {
    const space =
      '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
    const re = new RegExp(`^https?://[^${space}/$.?#][^\\n][^${space}]*$`, 'i');
    const reference = (url: string): boolean => {
      if (!re.test(url)) return false;
      const rest = url.slice(url.indexOf('//') + 2);
      const netloc = rest.split(/[/?#]/, 1)[0];
      if (netloc.includes('[') !== netloc.includes(']')) return false;
      if (/[^\x00-\x7f]/.test(netloc)) {
        const bare = netloc.replace(/[@:#?]/g, '');
        if (bare.normalize('NFKC') !== bare && /[/?#@:]/.test(bare.normalize('NFKC'))) return false;
      }
      const hostinfo = netloc.slice(netloc.lastIndexOf('@') + 1);
      // str.partition: split at the first occurrence only.
      const host = hostinfo.includes('[')
        ? hostinfo.slice(hostinfo.indexOf('[') + 1).split(']')[0]
        : hostinfo.split(':')[0];
      return host !== '';
    };
    const unit = fc.constantFrom(
      'h',
      't',
      'p',
      's',
      'H',
      ':',
      '/',
      'a',
      '.',
      '$',
      '?',
      '#',
      '@',
      '[',
      ']',
      ' ',
      '\n',
      '\x1c',
      '\u3000',
      'é',
      '\uff03',
    );
    const arb = fc.oneof(
      fc.string({ unit, maxLength: 16 }),
      fc.string({ unit, maxLength: 12 }).map((s) => `http://${s}`),
      fc.string({ unit, maxLength: 12 }).map((s) => `HTTPS://${s}`),
    );
    fc.assert(
      fc.property(arb, (s) => {
        expect(isHttpUrl(s), JSON.stringify(s)).toBe(reference(s));
      }),
      { numRuns: 20_000 },
    );
  }, 60_000);

  it('never throws', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (s) => {
        isHttpUrl(s);
        isHttpUrl(`http://${s}`);
      }),
    );
  }, 60_000);
});

describe('unfetchableUrl', () => {
  // What the check of the usual shape must agree with: this regex (which it is again, after a
  // hand-written loop for a while), and the WHATWG parser for everything that shape does not cover.
  const PLAIN_HOST = /^https?:\/\/[a-z0-9.-]+(?::\d{0,5})?(?:[/?#]|$)/i;
  function reference(url: string): string | null {
    if (url.includes('\uFFFD')) return 'encoding';
    if (PLAIN_HOST.test(url)) return null;
    try {
      const u = new URL(url);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '' ? null : 'invalid-url';
    } catch {
      return 'invalid-url';
    }
  }

  it('answers as the plain-host regex and the URL parser do, on the shapes near the boundary', () => {
    const cases = [
      'http://a',
      'HTTPS://EXAMPLE.COM/x',
      'hTtP://a.b:/',
      'http://a.b:12345/',
      'http://a.b:123456/',
      'http://a.b:1a/',
      'http://a_b.com/',
      'http://a.com?q',
      'http://a.com#f',
      'http://a.com\r/',
      'http://a.com\u0010/',
      'http://ex\u212Aample.com/',
      'http://[::1]/',
      'http://user@a.com/',
      'http://',
      'https:/a.com',
      'ftp://a.com/',
      'http://a.com:99999',
      'http://-/',
      'http://../',
      'http://a.com/\uFFFD',
    ];
    for (const url of cases) expect(unfetchableUrl(url), url).toBe(reference(url));
  });

  it('answers as the plain-host regex and the URL parser do, on generated URLs', () => {
    const part = fc.string({ unit: fc.constantFrom(...'aZ09.-_:/?#@[]%\r\u00e9\u212a\uFFFD') });
    const url = fc
      .tuple(fc.constantFrom('http://', 'https://', 'HTTP://', 'http:/', ''), part)
      .map(([a, b]) => a + b);
    fc.assert(
      fc.property(url, (u) => unfetchableUrl(u) === reference(u)),
      { numRuns: 5000 },
    );
  });
});

describe('stripUrlToHomepage', () => {
  it('keeps the authority as written and lower-cases the scheme', () => {
    expect(stripUrlToHomepage('HTTPS://User:Pw@Example.COM:8443/a?b#c')).toBe(
      'https://User:Pw@Example.COM:8443/',
    );
    expect(stripUrlToHomepage('  http://example.com/x  ')).toBe('http://example.com/');
  });
  it('throws InvalidUrlError with the code for anything else', () => {
    for (const bad of ['', 'example.com', 'ftp://a.b/', 'http:/a.b/', 'mailto:x@y.z']) {
      try {
        stripUrlToHomepage(bad);
        expect.unreachable(bad);
      } catch (e) {
        expect(e).toBeInstanceOf(InvalidUrlError);
        expect((e as InvalidUrlError).code).toBe('USP_INVALID_URL');
      }
    }
  });
});

describe('resolveUrl', () => {
  const base = 'https://example.com/dir/robots.txt';
  it('resolves relative, root-relative and protocol-relative references', () => {
    expect(resolveUrl('/sitemap.xml', base)).toBe('https://example.com/sitemap.xml');
    expect(resolveUrl('s.xml', base)).toBe('https://example.com/dir/s.xml');
    expect(resolveUrl('../s.xml?a=1#f', base)).toBe('https://example.com/s.xml?a=1#f');
    expect(resolveUrl('//cdn.example.net/s.xml', base)).toBe('https://cdn.example.net/s.xml');
    expect(resolveUrl('http://other.org/s.xml', base)).toBe('http://other.org/s.xml');
  });
  it('returns null when it cannot resolve or the result is not http(s)', () => {
    expect(resolveUrl('ftp://example.com/s.xml', base)).toBeNull();
    expect(resolveUrl('javascript:alert(1)', base)).toBeNull();
    expect(resolveUrl('/s.xml', 'not a base')).toBeNull();
    expect(resolveUrl('http://', base)).toBeNull();
    expect(resolveUrl('http://exa mple.com/', base)).toBeNull();
  });
});

describe('urlKey', () => {
  it('gives one key to spellings of one URL', () => {
    const same = [
      'http://example.com/a/b%7ec?x=%2f',
      'HTTP://EXAMPLE.COM:80/a/b~c?x=%2F',
      'http://example.com/a/./b%7Ec?x=%2F#frag',
      'http://Example.com/a/x/../b~c?x=%2f#',
    ];
    const keys = new Set(same.map(urlKey));
    expect([...keys]).toEqual(['http://example.com/a/b~c?x=%2F']);
  });
  it('turns an empty path into / and keeps what matters', () => {
    expect(urlKey('https://example.com')).toBe('https://example.com/');
    expect(urlKey('https://example.com:8443')).toBe('https://example.com:8443/');
    expect(urlKey('https://example.com/A')).not.toBe(urlKey('https://example.com/a'));
    expect(urlKey('https://example.com/')).not.toBe(urlKey('http://example.com/'));
    expect(urlKey('https://example.com/?a=1&b=2')).not.toBe(urlKey('https://example.com/?b=2&a=1'));
  });
  it('falls back to the text for an unparseable URL', () => {
    expect(urlKey('not a url')).toBe('not a url');
  });
  it('normalises percent-encoding case and unreserved escapes only', () => {
    expect(normalisePercentEncoding('%41%2f%7e%3A%e2%82%ac')).toBe('A%2F~%3A%E2%82%AC');
  });
});
