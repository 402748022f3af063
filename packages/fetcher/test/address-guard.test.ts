import { OpenedResources } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
import {
  classifyAddress,
  createWebClient,
  type FetchErrorResponse,
  type FetcherWebClient,
  hostIsPrivate,
  isPrivateAddress,
  type WebClientOptions,
} from '../src/index.js';
import { text } from './helpers.js';

const opened = new OpenedResources();
const server = (routes: Parameters<typeof opened.server>[0] = {}) => opened.server(routes);

/** A client with the guard on (the default), retrying nothing so a refusal shows in one request. */
function guardedClient(options: WebClientOptions = {}): FetcherWebClient {
  return opened.track(createWebClient({ retries: 1, connectTimeoutMs: 2000, ...options }));
}

afterEach(() => opened.closeAll());

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.10', 'private'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['100.127.255.254', 'shared (CGNAT)'],
    ['169.254.1.1', 'link-local'],
    ['169.254.169.254', 'cloud metadata'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'cloud metadata'],
    ['64:ff9b::a9fe:a9fe', 'cloud metadata'],
    ['2002:c0a8:0101::1', 'private'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['ff02::1', 'multicast'],
  ])('%s is %s', (ip, category) => {
    expect(classifyAddress(ip)).toBe(category);
    expect(isPrivateAddress(ip)).toBe(true);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '192.169.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '2002:0808:0808::1',
    'example.com',
    '',
  ])('%s is public (or not an address)', (ip) => {
    expect(classifyAddress(ip)).toBeNull();
    expect(isPrivateAddress(ip)).toBe(false);
  });
});

describe('hostIsPrivate', () => {
  it('judges literals and names by what they resolve to', async () => {
    expect(await hostIsPrivate('http://127.0.0.1:8080/')).toBe(true);
    expect(await hostIsPrivate('http://[::1]/')).toBe(true);
    expect(await hostIsPrivate('http://10.0.0.5/')).toBe(true);
    expect(await hostIsPrivate('http://localhost/')).toBe(true);
    expect(await hostIsPrivate('http://93.184.216.34/')).toBe(false);
    expect(await hostIsPrivate('not a url')).toBe(false);
  });
});

describe('the SSRF guard (default on)', () => {
  it('refuses loopback literals without sending anything', async () => {
    const s = await server({ '/a': { body: 'secret' } });
    const res = (await guardedClient().get(`${s.origin}/a`)) as FetchErrorResponse;
    expect(res).toMatchObject({
      kind: 'error',
      code: 'blocked',
      status: null,
      retryable: false,
      attempts: 1,
    });
    expect(res.message).toContain('loopback');
    expect(res.message).toContain('allowPrivateNetworks');
    expect(s.requests).toEqual([]);
  });

  it('refuses [::1]', async () => {
    const res = (await guardedClient().get('http://[::1]:9/x')) as FetchErrorResponse;
    expect(res).toMatchObject({ code: 'blocked' });
  });

  // Refused before any socket is opened: no packet ever leaves for these addresses.
  it.each([
    ['http://10.0.0.1/sitemap.xml', 'private'],
    ['http://192.168.1.1/', 'private'],
    ['http://169.254.169.254/latest/meta-data/', 'cloud metadata'],
    ['http://0.0.0.0:80/', 'unspecified'],
    ['http://[fd00::1]/', 'unique-local'],
    ['http://[fe80::1]/', 'link-local'],
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://2130706433/', 'loopback'],
  ])('refuses %s (%s)', async (url, category) => {
    const res = (await guardedClient().get(url)) as FetchErrorResponse;
    expect(res).toMatchObject({ code: 'blocked', retryable: false });
    expect(res.message).toContain(category);
  });

  it('catches a name that resolves inward, at connect time', async () => {
    const s = await server({ '/a': { body: 'secret' } });
    const res = (await guardedClient().get(`http://localhost:${s.port}/a`)) as FetchErrorResponse;
    expect(res).toMatchObject({ code: 'blocked', retryable: false });
    expect(res.message).toMatch(/localhost \((127\.0\.0\.1|::1)\)/);
    expect(s.requests).toEqual([]);
  });

  it('allowPrivateNetworks lets loopback through', async () => {
    const s = await server({ '/a': { body: 'fine' } });
    expect(await text(await guardedClient({ allowPrivateNetworks: true }).get(`${s.origin}/a`))).toBe('fine');
    expect(
      await text(await guardedClient({ allowPrivateNetworks: true }).get(`http://localhost:${s.port}/a`)),
    ).toBe('fine');
  });

  describe('allowPrivateHosts (a homepage on the local network)', () => {
    it('lets the named host through and nothing else', async () => {
      const s = await server({ '/a': { body: 'home' } });
      const c = guardedClient({ allowPrivateHosts: ['127.0.0.1'] });
      expect(await text(await c.get(`${s.origin}/a`))).toBe('home');
      expect(await c.get(`http://localhost:${s.port}/a`)).toMatchObject({ code: 'blocked' });
      expect(s.requests).toEqual(['GET /a']);
    });

    it('checks every redirect hop', async () => {
      const s = await server({
        '/to-metadata': { status: 302, headers: { Location: 'http://169.254.169.254/latest/meta-data/' } },
        '/to-private': { status: 301, headers: { Location: 'http://10.0.0.1/admin' } },
        '/to-v6-loopback': { status: 307, headers: { Location: 'http://[::1]/' } },
      });
      s.route('/to-localhost', {
        status: 302,
        headers: { Location: `http://localhost:${s.port}/to-private` },
      });
      const c = guardedClient({ allowPrivateHosts: ['127.0.0.1'] });
      for (const path of ['/to-metadata', '/to-private', '/to-v6-loopback', '/to-localhost']) {
        const res = (await c.get(`${s.origin}${path}`)) as FetchErrorResponse;
        expect(res, path).toMatchObject({ kind: 'error', code: 'blocked', retryable: false });
      }
      // Each hop from the allowed host was asked for; none of the refused targets got a request.
      expect(s.requests).toEqual([
        'GET /to-metadata',
        'GET /to-private',
        'GET /to-v6-loopback',
        'GET /to-localhost',
      ]);
    });

    it('accepts bracketed IPv6 and any case', async () => {
      const c = guardedClient({ allowPrivateHosts: ['LOCALHOST', '[::1]'] });
      expect(c.options.allowPrivateHosts.has('localhost')).toBe(true);
      expect(c.options.allowPrivateHosts.has('::1')).toBe(true);
    });
  });

  describe('allowPrivateOrigins (exactly the homepage origin)', () => {
    it('lets that scheme, host and port through, however spelt, and not another port', async () => {
      const home = await server({ '/a': { body: 'home' } });
      const other = await server({ '/b': { body: 'other service' } });
      const c = guardedClient({ allowPrivateOrigins: [home.origin] });
      expect(await text(await c.get(`${home.origin}/a`))).toBe('home');
      expect(await text(await c.get(`http://127.1:${home.port}/a`))).toBe('home');
      expect(await text(await c.get(`http://2130706433:${home.port}/a`))).toBe('home');
      for (const host of ['127.0.0.1', '127.1', '2130706433']) {
        expect(await c.get(`http://${host}:${other.port}/b`), host).toMatchObject({ code: 'blocked' });
      }
      home.route('/jump', { status: 302, headers: { Location: `${other.origin}/b` } });
      expect(await c.get(`${home.origin}/jump`)).toMatchObject({ code: 'blocked' });
      expect(other.requests).toEqual([]);
    });

    it('may be a function asked for each private origin as it is connected to (origins learnt as a run goes)', async () => {
      const home = await server({ '/a': { body: 'home' } });
      const other = await server({ '/b': { body: 'other service' } });
      const listed = new Set<string>();
      const asked: string[] = [];
      const c = guardedClient({
        allowPrivateOrigins: (origin) => {
          asked.push(origin);
          return listed.has(origin);
        },
      });
      expect(await c.get(`${home.origin}/a`)).toMatchObject({ code: 'blocked' });
      listed.add(home.origin);
      expect(await text(await c.get(`${home.origin}/a`))).toBe('home');
      expect(await c.get(`${other.origin}/b`)).toMatchObject({ code: 'blocked' });
      expect(other.requests).toEqual([]);
      expect(asked).toContain(other.origin);
    });

    it('checks its entries early', () => {
      expect(() => guardedClient({ allowPrivateOrigins: ['ftp://127.0.0.1'] })).toThrow(
        /allowPrivateOrigins/,
      );
      expect(
        guardedClient({ allowPrivateOrigins: ['HTTP://127.1:80/x'] }).options.allowPrivateOrigins,
      ).toEqual(new Set(['http://127.0.0.1']));
    });
  });
});
