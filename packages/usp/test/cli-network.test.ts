import { once } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startTestProxy, startTestServer, type TestProxy, type TestServer } from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli-helpers.js';

// The network flags of `ls` and `validate`, through the built CLI against servers that record
// what they receive.

const NET = ['--allow-private-networks', '--retries', '1', '--timeout', '5s'];
const XML = { 'Content-Type': 'application/xml' };
// The fetcher's self-signed certificate for 127.0.0.1 (a CA of its own), read in place.
const CERT = fileURLToPath(new URL('../../fetcher/test/fixtures/self-signed-cert.pem', import.meta.url));
const KEY = fileURLToPath(new URL('../../fetcher/test/fixtures/self-signed-key.pem', import.meta.url));

function urlset(urls: string[]): string {
  return `<?xml version="1.0"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.map((u) => `<url><loc>${u}</loc></url>`).join('\n')}\n</urlset>\n`;
}

type Recording = TestServer & {
  /** The headers of each request, by path. */
  seen: Map<string, IncomingHttpHeaders[]>;
  record(path: string, body: string, headers?: Record<string, string>): void;
};

/** A server whose routes record the headers they were sent. */
async function recordingServer(): Promise<Recording> {
  const s = await startTestServer();
  const seen = new Map<string, IncomingHttpHeaders[]>();
  const record = (path: string, body: string, headers: Record<string, string> = XML) =>
    s.route(path, (req, res) => {
      seen.set(path, [...(seen.get(path) ?? []), req.headers]);
      res.writeHead(200, headers);
      res.end(body);
    });
  return Object.assign(s, { seen, record });
}

let site: Recording;
let other: Recording;
let proxy: TestProxy;
let o: string;

beforeAll(async () => {
  site = await recordingServer();
  other = await recordingServer();
  proxy = await startTestProxy();
  o = site.origin;
  site.record('/robots.txt', `Sitemap: ${o}/sitemap.xml\nSitemap: ${o}/moved.xml\n`, {
    'Content-Type': 'text/plain',
  });
  site.record('/sitemap.xml', urlset([`${o}/a`, `${o}/b`]));
  // Another origin (same address, another port): reached only through a redirect.
  site.route('/moved.xml', { status: 302, headers: { Location: `${other.origin}/elsewhere.xml` } });
  other.record('/elsewhere.xml', urlset([`${o}/c`]));
  site.record('/big.xml', urlset(Array.from({ length: 200 }, (_, i) => `${o}/page-${i}`)));
});

afterAll(async () => {
  await Promise.all([site.close(), other.close(), proxy.close()]);
});

const pagesOf = (stdout: string) => stdout.trimEnd().split('\n').filter(Boolean).sort();

describe('-H, --header', () => {
  it('sends each header to the site, and none of them past a redirect to another origin', async () => {
    site.seen.clear();
    other.seen.clear();
    const r = await runCli([
      'ls',
      ...NET,
      '-f',
      'pages',
      '-H',
      'Cookie: session=1',
      '-H',
      'Authorization: Bearer t0k',
      '--header',
      'X-Api-Key:  k1 ',
      `${o}/`,
    ]);
    expect(r.code).toBe(0);
    expect(pagesOf(r.stdout)).toEqual([`${o}/a`, `${o}/b`, `${o}/c`]);
    for (const path of ['/robots.txt', '/sitemap.xml']) {
      expect(site.seen.get(path)?.[0]).toMatchObject({
        cookie: 'session=1',
        authorization: 'Bearer t0k',
        'x-api-key': 'k1',
      });
    }
    const moved = other.seen.get('/elsewhere.xml')?.[0];
    expect(moved).toBeDefined();
    expect(moved?.cookie).toBeUndefined();
    expect(moved?.authorization).toBeUndefined();
    expect(moved?.['x-api-key']).toBeUndefined();
  });

  it('sends them from validate too, and refuses a line without a colon (exit 2)', async () => {
    site.seen.clear();
    const r = await runCli(['validate', ...NET, '-H', 'Cookie: v=2', `${o}/sitemap.xml`]);
    expect(r.code).toBe(0);
    expect(site.seen.get('/sitemap.xml')?.[0]?.cookie).toBe('v=2');
    const bad = await runCli(['ls', ...NET, '-H', 'no colon', `${o}/`]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('option --header expects "Name: value", got "no colon"');
  });
});

describe('--proxy and the proxy variables', () => {
  it('tunnels every request through --proxy', async () => {
    proxy.targets.length = 0;
    const r = await runCli(['ls', ...NET, '-f', 'pages', '--proxy', proxy.url, `${o}/`]);
    expect(r.code).toBe(0);
    expect(pagesOf(r.stdout)).toEqual([`${o}/a`, `${o}/b`, `${o}/c`]);
    expect(new Set(proxy.targets)).toEqual(new Set([`127.0.0.1:${site.port}`, `127.0.0.1:${other.port}`]));
    proxy.targets.length = 0;
    const v = await runCli(['validate', ...NET, '--proxy', proxy.url, `${o}/sitemap.xml`]);
    expect(v.code).toBe(0);
    expect(proxy.targets).toEqual([`127.0.0.1:${site.port}`]);
    const bad = await runCli(['ls', ...NET, '--proxy', 'socks5://127.0.0.1:1', `${o}/`]);
    expect(bad.code).toBe(2);
  });

  it('says a dead proxy failed, naming it (not its credentials), rather than calling the site unreachable', async () => {
    // Port 1 on loopback: refused.
    const dead = await runCli(['ls', ...NET, '--proxy', 'http://user:secret@127.0.0.1:1', `${o}/`]);
    expect(dead.code).toBe(1);
    expect(dead.stderr.trimEnd().split('\n')).toEqual([
      `usp: ${o}/: proxy http://127.0.0.1:1 (set by --proxy) failed, the site was not reached: connect ECONNREFUSED 127.0.0.1:1`,
    ]);
    const fromEnv = await runCli(['ls', ...NET, `${o}/`], { env: { HTTP_PROXY: 'http://127.0.0.1:1' } });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.stderr).toContain(
      `usp: ${o}/: proxy http://127.0.0.1:1 (set in the environment) failed, the site was not reached`,
    );
  });

  it('reads HTTP_PROXY for http URLs, not HTTPS_PROXY, and goes direct for NO_PROXY hosts', async () => {
    proxy.targets.length = 0;
    const viaEnv = await runCli(['ls', ...NET, '-f', 'pages', `${o}/`], { env: { HTTP_PROXY: proxy.url } });
    expect(pagesOf(viaEnv.stdout)).toEqual([`${o}/a`, `${o}/b`, `${o}/c`]);
    expect(proxy.targets).toContain(`127.0.0.1:${site.port}`);

    proxy.targets.length = 0;
    const httpsOnly = await runCli(['ls', ...NET, '-f', 'pages', `${o}/`], {
      env: { HTTPS_PROXY: proxy.url },
    });
    expect(httpsOnly.code).toBe(0);
    const bypassed = await runCli(['ls', ...NET, '-f', 'pages', `${o}/`], {
      env: { HTTP_PROXY: proxy.url, NO_PROXY: 'example.com,127.0.0.1' },
    });
    expect(pagesOf(bypassed.stdout)).toEqual([`${o}/a`, `${o}/b`, `${o}/c`]);
    expect(proxy.targets).toEqual([]);
  });
});

describe('--insecure and --ca-file', () => {
  let tls: ReturnType<typeof createServer>;
  let origin: string;
  beforeAll(async () => {
    const { readFileSync } = await import('node:fs');
    tls = createServer({ key: readFileSync(KEY), cert: readFileSync(CERT) }, (req, res) => {
      if (req.url === '/robots.txt') {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.end(`Sitemap: ${origin}/s.xml\n`);
      } else if (req.url === '/s.xml') {
        res.writeHead(200, XML);
        res.end(urlset([`${origin}/secure`]));
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    tls.listen(0, '127.0.0.1');
    await once(tls, 'listening');
    origin = `https://127.0.0.1:${(tls.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    tls.closeAllConnections();
    await new Promise((r) => tls.close(r));
  });

  it('refuses a certificate it cannot verify, unless --insecure or --ca-file trusts it', async () => {
    const strict = await runCli(['ls', ...NET, '-f', 'pages', `${origin}/`]);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toBe('');
    // One line, saying what would get past the certificate (after Node's own words, which Node 24
    // follows with "; if the root CA is installed locally, try running Node.js with --use-system-ca").
    const lines = strict.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    const at = origin.replaceAll('.', '\\.');
    expect(lines[0]).toMatch(
      new RegExp(
        `^usp: ${at}/: site unreachable: ${at}/robots\\.txt: self-signed certificate(?:; [^()]+)? \\(the certificate did not verify: --ca-file FILE trusts a private certificate authority, --insecure skips the check\\)$`,
      ),
    );
    const insecure = await runCli(['ls', ...NET, '-f', 'pages', '--insecure', `${origin}/`]);
    expect(insecure.code).toBe(0);
    expect(insecure.stdout).toBe(`${origin}/secure\n`);
    const trusted = await runCli(['ls', ...NET, '-f', 'pages', '--ca-file', CERT, `${origin}/`]);
    expect(trusted.code).toBe(0);
    expect(trusted.stdout).toBe(`${origin}/secure\n`);
    const validated = await runCli(['validate', ...NET, '--ca-file', CERT, `${origin}/s.xml`]);
    expect(validated.code).toBe(0);
  });

  it('says in one line when the CA file cannot be used (exit 2)', async () => {
    const missing = await runCli(['ls', ...NET, '--ca-file', '/nonexistent/ca.pem', `${origin}/`]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('option --ca-file: cannot read /nonexistent/ca.pem: no such file');
    const notPem = await runCli(['ls', ...NET, '--ca-file', KEY, `${origin}/`]);
    expect(notPem.code).toBe(2);
    expect(notPem.stderr).toContain(`option --ca-file: ${KEY} holds no PEM certificate`);
  });
});

describe('--max-size', () => {
  it('caps each sitemap body: the pages before the cap are kept, the rest is reported', async () => {
    const full = await runCli(['ls', ...NET, '-f', 'pages', '-r', '--extra-known-path', 'big.xml', `${o}/`]);
    expect(full.stdout.trimEnd().split('\n')).toHaveLength(200 + 2);
    const capped = await runCli([
      'ls',
      ...NET,
      '-f',
      'pages',
      '-r',
      '--extra-known-path',
      'big.xml',
      '--max-size',
      '2k',
      `${o}/`,
    ]);
    expect(capped.code).toBe(0);
    const pages = capped.stdout.trimEnd().split('\n');
    expect(pages.length).toBeGreaterThan(5);
    expect(pages.length).toBeLessThan(100);
    expect(pages).toContain(`${o}/page-0`);

    const v = await runCli(['validate', ...NET, '--max-size', '2KiB', `${o}/big.xml`]);
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(/too-large .*\(2048 bytes\)/);
    const bad = await runCli(['validate', ...NET, '--max-size', 'lots', `${o}/big.xml`]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('option --max-size expects a size such as 500k, 10M or 1G; got "lots"');
  });
});

it('lists the network flags in ls --help and validate --help', async () => {
  for (const command of ['ls', 'validate']) {
    const r = await runCli([command, '--help']);
    for (const flag of ['-H, --header', '--proxy URL', '--insecure', '--ca-file FILE', '--max-size SIZE']) {
      expect(r.stdout).toContain(flag);
    }
  }
});
