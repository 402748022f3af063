import { InvalidOptionError } from '@usp-ts/core';
import { streamedBody } from '@usp-ts/testkit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isRobotsTxtUrl, robotsTxt } from '../src/index.js';
import { run } from './registry.js';

describe('claims', () => {
  const claims = (url: string) => robotsTxt().claims({ url, headers: () => null, head: '' });

  it('claims a document whose URL path ends in /robots.txt', () => {
    expect(claims('https://example.com/robots.txt')).toBe(true);
    expect(claims('https://example.com/sub/robots.txt')).toBe(true);
    expect(claims('https://example.com/robots.txt?v=2')).toBe(true); // usp: plain text (whole URL must end so)
    expect(claims('https://example.com/robots.txt#x')).toBe(true);
  });

  it('leaves every other document to the formats after it', () => {
    expect(claims('https://example.com/robots-copy.txt')).toBe(false);
    expect(claims('https://example.com/robots.txt/x')).toBe(false);
    expect(claims('https://example.com/sitemap.txt')).toBe(false);
    expect(claims('https://example.com/ROBOTS.TXT')).toBe(false); // the path is case-sensitive
    expect(isRobotsTxtUrl('not a url/robots.txt')).toBe(true);
  });

  it('is named robots and is a text format', () => {
    const f = robotsTxt();
    expect(f.name).toBe('robots');
    expect(f.kind).toBe('text');
  });
});

describe('Sitemap lines', () => {
  it('reads Sitemap and Site-map keys in any case, with or without space after the colon', async () => {
    const r = await run(
      'Sitemap: https://example.com/1.xml\nsitemap:https://example.com/2.xml\nSITE-MAP:\thttps://example.com/3.xml\nsItE-mAp: https://example.com/4.xml\n',
    );
    expect(r.type).toBe('IndexRobotsTxtSitemap');
    expect(r.children).toEqual([1, 2, 3, 4].map((n) => `https://example.com/${n}.xml`));
    expect(r.codes).toEqual([]);
  });

  it('tolerates spaces and tabs before the colon (usp ignores such lines)', async () => {
    const r = await run('Sitemap : https://example.com/a.xml\nSitemap\t\t:https://example.com/b.xml\n');
    expect(r.children).toEqual(['https://example.com/a.xml', 'https://example.com/b.xml']);
  });

  it('removes a trailing comment (usp drops the whole line)', async () => {
    const r = await run(
      'Sitemap: https://example.com/a.xml # main sitemap\nSitemap: https://example.com/b.xml\t#x\n',
    );
    expect(r.children).toEqual(['https://example.com/a.xml', 'https://example.com/b.xml']);
  });

  it('keeps a # without whitespace before it as part of the URL, as usp', async () => {
    const r = await run('Sitemap: https://example.com/a.xml#frag\n');
    expect(r.children).toEqual(['https://example.com/a.xml#frag']);
  });

  it('resolves relative values against the robots.txt URL with a warning (usp drops them)', async () => {
    const r = await run('Sitemap: /sitemap.xml\nSitemap: news.xml\nSitemap: //cdn.example.net/s.xml\n', {
      url: 'https://example.com/dir/robots.txt',
    });
    expect(r.children).toEqual([
      'https://example.com/sitemap.xml',
      'https://example.com/dir/news.xml',
      'https://cdn.example.net/s.xml',
    ]);
    expect(r.codes).toEqual(['relative-url', 'relative-url', 'relative-url']);
  });

  it('skips values that are not http(s) URLs with a warning', async () => {
    const r = await run(
      'Sitemap: ftp://example.com/s.xml\nSitemap: http://x\nSitemap: javascript:alert(1)\nSitemap: http://exa mple.com/\nSitemap: https://example.com/ok.xml\n',
    );
    expect(r.children).toEqual(['https://example.com/ok.xml']);
    expect(r.codes).toEqual(['invalid-url', 'invalid-url', 'invalid-url', 'invalid-url']);
    expect(r.warnings[0].message).toContain('ftp://example.com/s.xml');
    expect(r.warnings[0].url).toBe('https://example.com/robots.txt');
  });

  it('keeps values verbatim (case, IDN) and de-duplicates on the exact text, first position kept', async () => {
    const r = await run(
      'Sitemap: HTTPS://EXAMPLE.COM/A.XML\nSitemap: https://b.example/\nSitemap: HTTPS://EXAMPLE.COM/A.XML\nSitemap: https://www.šiaurė.lt/s.xml\nSitemap: https://b.example/\n',
    );
    expect(r.children).toEqual([
      'HTTPS://EXAMPLE.COM/A.XML',
      'https://b.example/',
      'https://www.šiaurė.lt/s.xml',
    ]);
  });

  it('de-duplicates a relative value against the absolute one it resolves to', async () => {
    const r = await run('Sitemap: https://example.com/s.xml\nSitemap: /s.xml\n');
    expect(r.children).toEqual(['https://example.com/s.xml']);
  });

  it('ignores keys that only look alike, commented lines and empty values', async () => {
    const r = await run(
      [
        'Sitemaps: https://example.com/1.xml',
        'Site map: https://example.com/2.xml',
        '# Sitemap: https://example.com/3.xml',
        'Disallow: /x Sitemap: https://example.com/4.xml',
        'Sitemap:',
        'Sitemap:    # nothing',
        'https://example.com/5.xml',
      ].join('\n'),
    );
    expect(r.children).toEqual([]);
    expect(r.codes).toEqual([]);
  });

  it('reads Sitemap lines anywhere, inside or outside groups', async () => {
    const r = await run(
      'Sitemap: https://example.com/0.xml\nUser-agent: a\nSitemap: https://example.com/1.xml\nDisallow: /\nSitemap: https://example.com/2.xml\n',
    );
    expect(r.children).toHaveLength(3);
  });

  it('splits lines as Python splitlines() does, and strips them', async () => {
    const r = await run(
      '  Sitemap: https://example.com/a.xml   \r\nSitemap: https://example.com/b.xml\u2028Sitemap: https://example.com/c.xml\fSitemap: https://example.com/d.xml\x85Sitemap: https://example.com/e.xml\r',
    );
    expect(r.children).toEqual(['a', 'b', 'c', 'd', 'e'].map((x) => `https://example.com/${x}.xml`));
  });

  it('reads a line split across chunks, and a CRLF split across chunks once', async () => {
    const r = await run(
      streamedBody(['Site', 'map: https://exa', 'mple.com/a.xml\r', '\nSitemap: https://example.com/b.xml']),
    );
    expect(r.children).toEqual(['https://example.com/a.xml', 'https://example.com/b.xml']);
  });

  it('drops the unterminated last line when the body broke off (it may be a cut URL)', async () => {
    const r = await run(
      streamedBody(['Sitemap: https://example.com/a.xml\nSitemap: https://example.com/b.x'], true),
    );
    expect(r.children).toEqual(['https://example.com/a.xml']);
    expect(r.truncated).toBe(true);
  });

  it('skips an over-long line with a warning, without holding it', async () => {
    const long = `Sitemap: https://example.com/${'a'.repeat(200)}.xml`;
    const r = await run(`${long}\nSitemap: https://example.com/ok.xml\n`, { robots: { maxLineLength: 100 } });
    expect(r.children).toEqual(['https://example.com/ok.xml']);
    expect(r.codes).toEqual(['invalid-url']);
  });

  it('stops emitting children at the fan-out cap', async () => {
    const body = Array.from({ length: 10 }, (_, i) => `Sitemap: https://example.com/${i}.xml`).join('\n');
    const r = await run(`${body}\nUser-agent: *\nDisallow: /private\n`, {
      limits: { maxChildrenPerIndex: 3 },
    });
    expect(r.children).toHaveLength(3);
    expect(r.codes).toEqual(['limit']);
    expect(r.truncated).toBe(true);
  });

  it('warns about the fan-out cap only when there were more children', async () => {
    const body = Array.from({ length: 3 }, (_, i) => `Sitemap: https://example.com/${i}.xml`).join('\n');
    const r = await run(`${body}\nSitemap: https://example.com/0.xml\n`, {
      limits: { maxChildrenPerIndex: 3 },
    });
    expect(r.children).toHaveLength(3);
    expect(r.codes).toEqual([]);
    expect(r.truncated).toBe(false);
  });

  it('gives an empty index for an empty or sitemap-less robots.txt', async () => {
    for (const body of ['', '\n\n', 'User-agent: *\nDisallow:\n']) {
      const r = await run(body);
      expect(r.type).toBe('IndexRobotsTxtSitemap');
      expect(r.children).toEqual([]);
    }
  });
});

describe('rules', () => {
  it('parses user-agent groups, allow/disallow and crawl-delay, comments removed', async () => {
    const r = await run(
      [
        'Disallow: /before-any-group',
        'User-agent: a',
        'User-agent: B/2.0 # two agents, one group',
        'Disallow: /x # no x',
        'Allow: /x/y',
        'Crawl-delay: 2.5',
        'Sitemap: https://example.com/s.xml',
        'User-agent: *',
        'Disallow:',
        'Disallow: /private',
        'Crawl-delay: soon',
        'Host: example.com',
      ].join('\n'),
    );
    expect(r.robots!.groups).toEqual([
      {
        userAgents: ['a', 'B/2.0'],
        rules: [
          { allow: false, path: '/x' },
          { allow: true, path: '/x/y' },
        ],
        crawlDelay: 2.5,
      },
      { userAgents: ['*'], rules: [{ allow: false, path: '/private' }], crawlDelay: null },
    ]);
    expect(r.codes).toEqual(['invalid-robots']);
    expect(r.robots!.isAllowed('https://example.com/x/z', 'b')).toBe(false);
    expect(r.robots!.isAllowed('https://example.com/x/y', 'B')).toBe(true);
    expect(r.robots!.isAllowed('https://example.com/private/1', 'other')).toBe(false);
    expect(r.robots!.crawlDelay('a')).toBe(2.5);
    expect(r.robots!.crawlDelay('other')).toBeNull();
  });

  it('accepts the misspellings Google accepts', async () => {
    const r = await run('useragent: *\ndissallow: /a\ndisalow: /b\n');
    expect(r.robots!.groups[0].rules.map((x) => x.path)).toEqual(['/a', '/b']);
  });

  it('reads rules only from the first maxRulesLength characters, Sitemap lines from all of it', async () => {
    const r = await run('User-agent: *\nDisallow: /a\nDisallow: /b\nSitemap: https://example.com/s.xml\n', {
      robots: { maxRulesLength: 30 },
    });
    expect(r.robots!.groups[0].rules).toEqual([{ allow: false, path: '/a' }]);
    expect(r.children).toEqual(['https://example.com/s.xml']);
    expect(r.codes).toEqual(['limit']);
  });

  it('can skip the rules', async () => {
    const r = await run('User-agent: *\nDisallow: /\nSitemap: https://example.com/s.xml', {
      robots: { parseRules: false },
    });
    expect(r.robots).toBeNull();
    expect(r.children).toEqual(['https://example.com/s.xml']);
  });
});

describe('options', () => {
  it('are checked early', () => {
    expect(() => robotsTxt({ maxLineLength: 0 })).toThrow(InvalidOptionError);
    expect(() => robotsTxt({ maxRulesLength: -1 })).toThrow(InvalidOptionError);
    expect(() => robotsTxt({ parseRules: 'yes' as unknown as boolean })).toThrow(InvalidOptionError);
    expect(() => robotsTxt(null as unknown as object)).toThrow(InvalidOptionError);
    expect(robotsTxt({ maxLineLength: undefined }).name).toBe('robots');
  });
});

describe('robustness', () => {
  it('never throws and always gives an index, whatever the bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), async (bytes) => {
        const r = await run(bytes);
        expect(['IndexRobotsTxtSitemap', 'InvalidSitemap']).toContain(r.type);
        for (const url of r.children) expect(url).toMatch(/^https?:\/\//i);
        expect(r.codes).not.toContain('plugin-error');
      }),
      { numRuns: 300 },
    );
  }, 60_000);

  it('never throws on robots-like text', async () => {
    const line = fc.oneof(
      fc.constantFrom('User-agent: ', 'Disallow: ', 'Allow: ', 'Sitemap: ', 'Crawl-delay: ', '# ', ''),
      fc.string({ maxLength: 10 }),
    );
    const text = fc.array(fc.tuple(line, fc.string({ maxLength: 30 })), { maxLength: 20 });
    await fc.assert(
      fc.asyncProperty(text, fc.webUrl(), async (lines, url) => {
        const r = await run(lines.map(([k, v]) => k + v).join('\n'));
        expect(r.codes).not.toContain('plugin-error');
        r.robots?.isAllowed(url, 'bot');
        r.robots?.crawlDelay('bot');
      }),
      { numRuns: 300 },
    );
  }, 60_000);
});
