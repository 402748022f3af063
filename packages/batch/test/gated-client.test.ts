import { headerLookup, type WebClient, type WebResponse } from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { GatedClient } from '../src/gated-client.js';
import { hostGate, type PolitenessGate } from '../src/politeness-gate.js';

/** A client that answers 304 at once, and a gate that notes the host of each request. */
function recording(): { client: GatedClient; asked: string[] } {
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
  return { client: new GatedClient(inner, noting), asked };
}

describe('GatedClient host names', () => {
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

describe('GatedClient slots', () => {
  /** A client whose every answer is a 200 with a two-chunk body. */
  const inner: WebClient = {
    async get(url): Promise<WebResponse> {
      async function* body() {
        yield new Uint8Array(3);
        yield new Uint8Array(4);
      }
      return {
        kind: 'ok',
        status: 200,
        statusText: 'OK',
        url,
        headers: headerLookup(undefined),
        body: body(),
        cancel() {},
      };
    },
  };

  it('holds the host slot until the body is read to its end or dropped, and counts requests', async () => {
    const client = new GatedClient(inner, hostGate({ perHost: 1 }));
    const first = await client.get('http://a.example/1');
    let second = false;
    const pending = client.get('http://a.example/2').then((r) => {
      second = true;
      return r;
    });
    await new Promise((r) => setImmediate(r));
    expect(second).toBe(false);
    if (first.kind !== 'ok') throw new Error('expected ok');
    let bytes = 0;
    for await (const chunk of first.body) bytes += chunk.length;
    expect(bytes).toBe(7);
    const next = await pending;
    expect(second).toBe(true);
    let third = false;
    const last = client.get('http://a.example/3').then(() => {
      third = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(third).toBe(false);
    if (next.kind === 'ok') next.cancel();
    await last;
    expect(client.requests).toBe(3);
  });
});
