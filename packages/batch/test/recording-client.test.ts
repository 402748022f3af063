import { headerLookup, type WebClient, type WebResponse } from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { hostGate, type PolitenessGate } from '../src/politeness-gate.js';
import { RecordingClient } from '../src/recording-client.js';

/** A client that answers 304 at once, and a gate that notes the host of each request. */
function recording(): { client: RecordingClient; asked: string[] } {
  const inner: WebClient = {
    async get(url): Promise<WebResponse> {
      return { kind: 'not-modified', url, headers: headerLookup(undefined) };
    },
  };
  const gate = hostGate({ perHost: 4 });
  const asked: string[] = [];
  const noting: PolitenessGate = {
    acquire(host, signal) {
      asked.push(host);
      return gate.acquire(host, signal);
    },
    setCrawlDelay: (host, ms) => gate.setCrawlDelay(host, ms),
  };
  return { client: new RecordingClient(inner, noting), asked };
}

describe('RecordingClient host names', () => {
  // One client's requests in a row: a URL whose `scheme://authority/` equals the last one's
  // reuses its host name; anything else is parsed. Each must give what URL parsing gives.
  const urls = [
    'http://Example.COM/robots.txt',
    'http://Example.COM/sitemap.xml',
    'http://example.com/sitemap.xml',
    'http://127.1:8080/a',
    'http://127.1:8080/b?x=1',
    'http://127.0.0.1:8080/c',
    'https://user:pw@host.example/a',
    'https://user:pw@host.example/b',
    'http://a.example?q=/x',
    'http://a.example#f/x',
    'http:///b.example/x',
    'http:///c.example/x',
    'http://a.example\\@b.example/x',
    'http://a.example\\@c.example/x',
    'http://xn--bcher-kva.example/a',
    'http://bücher.example/b',
    'http://[::1]:80/a',
    'http://[::1]:80/b',
    'HTTP://Upper.example/a',
    'http://other.example/',
    'http://Example.COM/again',
  ];

  it('gives the gate and `hosts` the host name URL parsing gives, memo or not', async () => {
    const { client, asked } = recording();
    for (const url of urls) await client.get(url);
    expect(asked).toEqual(urls.map((u) => new URL(u).hostname));
    expect([...client.hosts].sort()).toEqual([...new Set(urls.map((u) => new URL(u).hostname))].sort());
  });

  it('a URL that does not parse is its own host, and is not remembered for the next', async () => {
    const { client, asked } = recording();
    await client.get('http://exa mple.com/a');
    await client.get('http://exa mple.com/b');
    await client.get('http://example.com/c');
    expect(asked).toEqual(['http://exa mple.com/a', 'http://exa mple.com/b', 'example.com']);
  });
});
