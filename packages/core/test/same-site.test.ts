import { beforeAll, describe, expect, it } from 'vitest';
import { loadPublicSuffixList, sameSite } from '../src/walk/same-site.js';

beforeAll(loadPublicSuffixList);

describe('sameSite (hostPolicy same-site)', () => {
  it('groups hosts by registrable domain under the public suffix list', () => {
    expect(sameSite('https://www.example.com/a', 'https://cdn.example.com/b')).toBe(true);
    expect(sameSite('https://a.example.co.uk/', 'https://b.example.co.uk/')).toBe(true);
    expect(sameSite('https://example.co.uk/', 'https://other.co.uk/')).toBe(false);
    expect(sameSite('https://example.com/', 'https://example.org/')).toBe(false);
  });

  it('keeps private suffixes apart (two github.io sites are two sites)', () => {
    expect(sameSite('https://alice.github.io/', 'https://bob.github.io/')).toBe(false);
  });

  it('treats IP addresses and unparseable URLs strictly', () => {
    expect(sameSite('http://127.0.0.1:8080/', 'http://127.0.0.1:9090/')).toBe(true);
    expect(sameSite('http://127.0.0.1/', 'http://127.0.0.2/')).toBe(false);
    expect(sameSite('not a url', 'https://example.com/')).toBe(false);
  });
});
