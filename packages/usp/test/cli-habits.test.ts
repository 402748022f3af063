import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnCli } from './cli-helpers.js';

// What a curl or wget user types on the first try, and what usp answers.

const NET = ['--allow-private-networks', '--retries', '1', '--timeout', '5s'];
const XML = { 'Content-Type': 'application/xml; charset=utf-8' };
const NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';

let server: TestServer;
let o: string;

beforeAll(async () => {
  server = await startTestServer();
  o = server.origin;
  server.route('/sitemap_index.xml', {
    headers: XML,
    body: `<sitemapindex xmlns="${NS}"><sitemap><loc>${o}/pages.xml</loc></sitemap></sitemapindex>`,
  });
  server.route('/pages.xml', {
    headers: XML,
    body: `<urlset xmlns="${NS}"><url><loc>${o}/a</loc></url></urlset>`,
  });
});

afterAll(async () => {
  await server.close();
});

describe('durations', () => {
  it('refuses a bare number with the two readings it could have, for every duration flag', async () => {
    const r = await runCli(['ls', '--timeout', '5', 'http://example.com/']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(
      'usp: error: option --timeout: 5 what? write 5s or 5ms',
    );
    const deadline = await runCli(['ls', '--deadline', '1.5', 'http://example.com/']);
    expect(deadline.stderr).toContain('option --deadline: 1.5 what? write 1.5s or 1.5ms');
    const batch = await runCli(['batch', '--out', '/nonexistent', '--site-deadline', '30', '-']);
    expect(batch.code).toBe(2);
    expect(batch.stderr).toContain('option --site-deadline: 30 what? write 30s or 30ms');
  });

  it('takes the value with its unit', async () => {
    const r = await runCli([
      'ls',
      ...NET,
      '--timeout',
      '1500ms',
      '-f',
      'pages',
      '--sitemap',
      `${o}/pages.xml`,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${o}/a\n`);
  });
});

describe("curl's and wget's spellings", () => {
  it('are refused with the usp flag to use', async () => {
    const cases: [string[], string][] = [
      [['-A', 'bot/1'], 'did you mean --user-agent?'],
      [['-x', 'http://127.0.0.1:3128'], 'did you mean --proxy?'],
      [['--cacert', 'ca.pem'], 'did you mean --ca-file?'],
      [['--cacert=ca.pem'], 'did you mean --ca-file?'],
      [['-m', '5'], 'did you mean --timeout? (per request; --deadline for the whole walk)'],
      [['--retry', '3'], 'did you mean --retries?'],
      [['--no-check-certificate'], 'did you mean --insecure?'],
    ];
    for (const [flags, hint] of cases) {
      const r = await runCli(['ls', ...flags, 'http://example.com/']);
      expect(r.code, flags.join(' ')).toBe(2);
      expect(r.stderr, flags.join(' ')).toMatch(/^usage: usp ls /);
      expect(r.stderr.trimEnd().split('\n').at(-1), flags.join(' ')).toMatch(
        new RegExp(`^usp: error: Unknown option '${flags[0].split('=')[0]}'.*; ${escapeRegExp(hint)}$`),
      );
    }
  });

  it('point only to a flag the command has', async () => {
    // `usp parse` has no network: -A is just unknown there.
    const r = await runCli(['parse', '-A', 'bot/1', '-']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("Unknown option '-A'");
    expect(r.stderr).not.toContain('did you mean');
  });
});

describe('usp ls with the URL of a sitemap', () => {
  it('walks the site and says that --sitemap reads just that one', async () => {
    const url = `${o}/sitemap_index.xml`;
    const r = await runCli(['ls', ...NET, '-k', url]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      `usp: note: ${url} looks like a sitemap; walking the whole site from ${o}/ (to read just that sitemap and what it names: usp ls --sitemap ${url})`,
    );
    const one = await runCli(['ls', ...NET, '-f', 'pages', '--sitemap', url]);
    expect(one.stdout).toBe(`${o}/a\n`);
    expect(one.stderr).not.toContain('note:');
  });

  it('says nothing for a homepage or a robots.txt', async () => {
    for (const url of [`${o}/`, `${o}/robots.txt`, `${o}/blog/`]) {
      const r = await runCli(['ls', ...NET, '-k', url]);
      expect(r.stderr, url).not.toContain('note:');
    }
  });
});

describe('usp validate exit status', () => {
  it('is 1 for findings, 2 when nothing could be checked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'usp-habits-'));
    try {
      const file = join(dir, 'bad.xml');
      writeFileSync(file, `<urlset xmlns="${NS}"><url><loc>/relative</loc></url></urlset>`);
      const findings = await runCli(['validate', file]);
      expect(findings.code).toBe(1);

      const missing = await runCli(['validate', join(dir, 'missing.xml')]);
      expect(missing).toEqual({
        code: 2,
        stdout: '',
        stderr: `usp: error: cannot read ${join(dir, 'missing.xml')}: no such file\n`,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    // Port 1 on loopback: connection refused, no HTTP response at all.
    const refused = await runCli(['validate', '--retries', '1', 'http://127.0.0.1:1/sitemap.xml']);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trimEnd().split('\n').at(-1)).toMatch(
      /^usp: http:\/\/127\.0\.0\.1:1\/sitemap\.xml: site unreachable: .*ECONNREFUSED/,
    );
    const json = await runCli(['validate', '-f', 'json', '--retries', '1', 'http://127.0.0.1:1/sitemap.xml']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout).reached).toBe(false);

    // A 404 is an answer: the sitemap URL is broken, a finding.
    const notFound = await runCli(['validate', ...NET, `${o}/missing.xml`]);
    expect(notFound.code).toBe(1);
    expect(notFound.stdout).toContain('404');
  });

  it('says so in --help', async () => {
    const r = await runCli(['validate', '--help']);
    expect(r.stdout).toMatch(/exit status:\n {2}0 .*\n {2}1 .*findings.*\n {2}2 +nothing could be checked/);
  });
});

describe('usp demo --serve --port', () => {
  it('serves the example site on the port given until Ctrl-C', async () => {
    const port = await freePort();
    const child = spawnCli(['demo', '--serve', '--port', String(port), '-f', 'pages']);
    const exited = once(child, 'exit');
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    await new Promise<void>((resolve, reject) => {
      child.stderr?.on('data', (chunk: string) => {
        stderr += chunk;
        if (stderr.includes('until Ctrl-C')) resolve();
      });
      child.once('exit', () => reject(new Error(`usp demo ended early: ${stderr}`)));
    });
    expect(stderr).toContain(`serving an example site at http://127.0.0.1:${port}/`);
    const robots = await fetch(`http://127.0.0.1:${port}/robots.txt`);
    expect(robots.status).toBe(200);
    expect(await robots.text()).toContain('Sitemap:');
    child.kill('SIGINT');
    const [code] = await exited;
    expect(code).toBe(0);
  });

  it('refuses a port out of range', async () => {
    const r = await runCli(['demo', '--port', '70000']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('option --port expects a port from 1 to 65535, got 70000');
  });
});

describe('usp batch --help', () => {
  it('says the per-host limit counts host names', async () => {
    const r = await runCli(['batch', '--help']);
    expect(r.stdout).toMatch(/--per-host N +requests in flight to one host name at most/);
    expect(r.stdout).toContain('localhost and 127.0.0.1 are two hosts');
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A port nothing listens on now: bound by the system, then let go. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
