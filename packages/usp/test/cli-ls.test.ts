import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { startTestServer, type TestServer } from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnCli } from './cli-helpers.js';
import { until } from './tree-helpers.js';

// `usp ls` as a child process against a real server on 127.0.0.1.

const NET = ['--allow-private-networks', '--retries', '1', '--timeout', '5s'];
const XML = { 'Content-Type': 'application/xml' };

/** The files in the page store directories under `dir`. */
function storedFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => n.startsWith('usp-pages-'))
    .flatMap((n) => readdirSync(join(dir, n)));
}

function urlset(entries: string[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${entries.join('\n')}\n</urlset>\n`;
}

let server: TestServer;
let o: string;

beforeAll(async () => {
  server = await startTestServer();
  o = server.origin;
  server.route('/robots.txt', {
    headers: { 'Content-Type': 'text/plain' },
    body: `User-agent: *\nDisallow: /private/\n\nSitemap: ${o}/sitemap_index.xml\n`,
  });
  server.route('/sitemap_index.xml', {
    headers: XML,
    body: `<?xml version="1.0"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n<sitemap><loc>${o}/sitemap-a.xml</loc></sitemap>\n<sitemap><loc>${o}/sitemap-b.xml.gz</loc></sitemap>\n<sitemap><loc>${o}/missing.xml</loc></sitemap>\n</sitemapindex>\n`,
  });
  server.route('/sitemap-a.xml', {
    headers: XML,
    body: urlset([
      `<url><loc>${o}/a1</loc><lastmod>2024-05-06T07:08:09+02:00</lastmod><priority>0.8</priority></url>`,
      `<url><loc>${o}/a2</loc><changefreq>sometimes</changefreq></url>`,
    ]),
  });
  server.route('/sitemap-b.xml.gz', {
    headers: { 'Content-Type': 'application/gzip' },
    body: gzipSync(
      urlset([`<url><loc>${o}/b1</loc></url>`, '<url><loc>https://other.example/b,2</loc></url>']),
    ),
  });
  // A site with no robots.txt whose only sitemap is an extra known path.
  server.route('/custom/map.xml', { headers: XML, body: urlset([`<url><loc>${o}/custom-page</loc></url>`]) });
});

afterAll(async () => {
  await server.close();
});

const tabtree = () =>
  [
    `${o}/`,
    `\t${o}/robots.txt`,
    `\t\t${o}/sitemap_index.xml`,
    `\t\t\t${o}/sitemap-a.xml`,
    `\t\t\t\t${o}/a1`,
    `\t\t\t\t${o}/a2`,
    `\t\t\t${o}/sitemap-b.xml.gz`,
    `\t\t\t\t${o}/b1`,
    '\t\t\t\thttps://other.example/b,2',
    `\t\t\t${o}/missing.xml`,
    '',
  ].join('\n');

describe('usp ls', () => {
  it('prints usp tabtree: sub-sitemaps before pages, invalid sitemaps as nodes', async () => {
    const r = await runCli(['ls', ...NET, `${o}/`]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(tabtree());
  });

  it('reduces the URL to the homepage first (usp normalize_homepage_url)', async () => {
    const r = await runCli(['ls', ...NET, `${o}/some/page?x=1`]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(tabtree());
  });

  it('keeps warnings on stderr and out of stdout', async () => {
    const r = await runCli(['ls', ...NET, `${o}/`]);
    expect(r.stdout).not.toContain('warning');
    expect(r.stderr).toMatch(/^usp: warning: .*sometimes.*\[invalid-changefreq\]/m);
  });

  it('strips the homepage with -u as usp does: leading slash, off-host URLs kept after a slash, root line kept', async () => {
    for (const flag of ['-u', '--strip-url']) {
      const r = await runCli(['ls', ...NET, flag, `${o}/`]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(
        [
          `${o}/`,
          '\t/robots.txt',
          '\t\t/sitemap_index.xml',
          '\t\t\t/sitemap-a.xml',
          '\t\t\t\t/a1',
          '\t\t\t\t/a2',
          '\t\t\t/sitemap-b.xml.gz',
          '\t\t\t\t/b1',
          '\t\t\t\t/https://other.example/b,2',
          '\t\t\t/missing.xml',
          '',
        ].join('\n'),
      );
    }
  });

  it('prints the flat page list with -f pages, stripped with -u: usp lines, each sitemap in document order', async () => {
    // Printed as pages arrive: the lines usp prints after the tree, sitemaps fetched at once interleaved.
    const inOrder = (lines: string[], a: string, b: string) => lines.indexOf(a) < lines.indexOf(b);
    const r = await runCli(['ls', ...NET, '-f', 'pages', `${o}/`]);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.pop()).toBe('');
    expect([...lines].sort()).toEqual([`${o}/a1`, `${o}/a2`, `${o}/b1`, 'https://other.example/b,2'].sort());
    expect(
      inOrder(lines, `${o}/a1`, `${o}/a2`) && inOrder(lines, `${o}/b1`, 'https://other.example/b,2'),
    ).toBe(true);
    const stripped = await runCli(['ls', ...NET, '--format', 'pages', '-u', `${o}/`]);
    expect(stripped.stdout.split('\n').sort()).toEqual([
      '',
      '/a1',
      '/a2',
      '/b1',
      '/https://other.example/b,2',
    ]);
  });

  it('prints the tree JSON form with -f json', async () => {
    const r = await runCli(['ls', ...NET, '-f', 'json', `${o}/`]);
    expect(r.code).toBe(0);
    const tree = JSON.parse(r.stdout);
    expect(tree.type).toBe('IndexWebsiteSitemap');
    expect(tree.url).toBe(`${o}/`);
    const robots = tree.subSitemaps[0];
    expect(robots).toMatchObject({ type: 'IndexRobotsTxtSitemap', url: `${o}/robots.txt` });
    const index = robots.subSitemaps[0];
    expect(index.type).toBe('IndexXMLSitemap');
    expect(index.subSitemaps.map((s: { type: string }) => s.type)).toEqual([
      'PagesXMLSitemap',
      'PagesXMLSitemap',
      'InvalidSitemap',
    ]);
    expect(index.subSitemaps[2].reason).toContain('404');
    expect(index.subSitemaps[0].pages[0]).toEqual({
      url: `${o}/a1`,
      priority: 0.8,
      lastModified: '2024-05-06T07:08:09+02:00',
      changeFrequency: null,
      newsStory: null,
      images: null,
      alternates: null,
    });
    expect(index.subSitemaps[0].pages[1].changeFrequency).toBe('always');
    // Indented as JSON.stringify(tree, null, 2).
    expect(r.stdout).toBe(`${JSON.stringify(tree, null, 2)}\n`);
  });

  it('streams one NDJSON object per page with its sitemap', async () => {
    const r = await runCli(['ls', ...NET, '-f', 'ndjson', `${o}/`]);
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.sitemap, l.url]).sort()).toEqual(
      [
        [`${o}/sitemap-a.xml`, `${o}/a1`],
        [`${o}/sitemap-a.xml`, `${o}/a2`],
        [`${o}/sitemap-b.xml.gz`, `${o}/b1`],
        [`${o}/sitemap-b.xml.gz`, 'https://other.example/b,2'],
      ].sort(),
    );
    const a1 = lines.find((l) => l.url === `${o}/a1`);
    expect(a1).toMatchObject({ priority: 0.8, lastModified: '2024-05-06T07:08:09+02:00' });
  });

  it('streams CSV rows with a header, quoting per RFC 4180', async () => {
    const r = await runCli(['ls', ...NET, '-f', 'csv', `${o}/`]);
    expect(r.code).toBe(0);
    const [header, ...rows] = r.stdout.trimEnd().split('\n');
    expect(header).toBe(
      'sitemap,url,priority,lastModified,changeFrequency,newsTitle,newsPublishDate,newsPublicationName,newsPublicationLanguage,images,alternates,extensions',
    );
    expect(rows.sort()).toEqual(
      [
        `${o}/sitemap-a.xml,${o}/a1,0.8,2024-05-06T07:08:09+02:00,,,,,,,,`,
        `${o}/sitemap-a.xml,${o}/a2,0.5,,always,,,,,,,`,
        `${o}/sitemap-b.xml.gz,${o}/b1,0.5,,,,,,,,,`,
        `${o}/sitemap-b.xml.gz,"https://other.example/b,2",0.5,,,,,,,,,`,
      ].sort(),
    );
  });

  it('writes ndjson lines as pages arrive, before the walk is over', async () => {
    // The second sitemap answers only once the first page has reached the CLI's stdout.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = await startTestServer({
      '/robots.txt': { headers: { 'Content-Type': 'text/plain' }, body: '' },
    });
    try {
      slow.route('/robots.txt', {
        headers: { 'Content-Type': 'text/plain' },
        body: `Sitemap: ${slow.origin}/first.xml\nSitemap: ${slow.origin}/second.xml\n`,
      });
      slow.route('/first.xml', {
        headers: XML,
        body: urlset([`<url><loc>${slow.origin}/early</loc></url>`]),
      });
      slow.route('/second.xml', async (_req, res) => {
        await gate;
        res.writeHead(200, XML);
        res.end(urlset([`<url><loc>${slow.origin}/late</loc></url>`]));
      });
      const child = spawnCli(['ls', ...NET, '-k', '-f', 'ndjson', `${slow.origin}/`]);
      let out = '';
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (d: string) => {
        out += d;
        if (out.includes('/early')) release();
      });
      expect(await exited).toBe(0);
      const urls = out
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).url);
      expect(urls).toEqual([`${slow.origin}/early`, `${slow.origin}/late`]);
    } finally {
      release();
      await slow.close();
    }
  });

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    'stops cleanly on %s: prints what it has, exits %i and leaves no temp directory',
    async (signal, exitCode) => {
      const hung = await startTestServer();
      // Its own temp directory: the page store's directory must be gone from it once the CLI exits.
      const temp = mkdtempSync(join(tmpdir(), 'usp-cli-signal-'));
      try {
        let child: ReturnType<typeof spawnCli> | null = null;
        let stored: string[] = [];
        hung.route('/robots.txt', {
          headers: { 'Content-Type': 'text/plain' },
          body: `Sitemap: ${hung.origin}/fast.xml\nSitemap: ${hung.origin}/never.xml\n`,
        });
        hung.route('/fast.xml', { headers: XML, body: urlset([`<url><loc>${hung.origin}/p</loc></url>`]) });
        // A sitemap that never finishes; the signal comes once the CLI is waiting on it.
        hung.route('/never.xml', (_req, res) => {
          res.writeHead(200, XML);
          res.write(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`);
          // The signal comes once fast.xml's page is on disk.
          void until(() => storedFiles(temp).length > 0).then(() => {
            stored = storedFiles(temp);
            child?.kill(signal);
          });
        });
        child = spawnCli(['ls', ...NET, '-k', `${hung.origin}/`], { TMPDIR: temp });
        let out = '';
        let err = '';
        child.stdout.setEncoding('utf8');
        child.stdout.on('data', (d: string) => {
          out += d;
        });
        child.stderr?.setEncoding('utf8').on('data', (d: string) => {
          err += d;
        });
        const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
        expect(code).toBe(exitCode);
        expect(out.split('\n')[0]).toBe(`${hung.origin}/`);
        expect(out).toContain(`\t\t${hung.origin}/never.xml\n`);
        expect(err).toContain('aborted');
        expect(err).not.toMatch(/\n\s+at /);
        // fast.xml's page was on disk when the signal came, and nothing is left after.
        expect(stored).toHaveLength(1);
        expect(readdirSync(temp)).toEqual([]);
      } finally {
        await hung.close();
        rmSync(temp, { recursive: true, force: true });
      }
    },
  );

  it('exits 1 with one line saying so when nothing at all could be reached', async () => {
    // Port 1 on loopback: connection refused.
    const r = await runCli(['ls', '--retries', '1', '--timeout', '5s', 'http://127.0.0.1:1/']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('http://127.0.0.1:1/\n');
    const last = r.stderr.trimEnd().split('\n').at(-1);
    expect(last).toMatch(
      /^usp: http:\/\/127\.0\.0\.1:1\/: site unreachable: http:\/\/127\.0\.0\.1:1\/robots\.txt: connect ECONNREFUSED/,
    );
    // Exactly that line: no warning per failed request before it (-v shows them).
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    const nd = await runCli(['ls', '--retries', '1', '-f', 'ndjson', 'http://127.0.0.1:1/']);
    expect(nd.code).toBe(1);
    expect(nd.stdout).toBe('');
  });

  for (const [status, headers] of [
    [429, {}],
    [503, {}],
    // Beyond the fetcher's cap on Retry-After: the first answer is final, no retry.
    [429, { 'Retry-After': '3600' }],
  ] as const) {
    it(`a host refusing everything (${status} ${JSON.stringify(headers)}) exits 1 with one line naming the status`, async () => {
      const refusing = await startTestServer({ '*': { status, headers, body: 'later' } });
      try {
        const r = await runCli(['ls', '--allow-private-networks', '--retries', '2', `${refusing.origin}/`]);
        expect(r.code).toBe(1);
        expect(r.stderr.trimEnd().split('\n')).toEqual([
          expect.stringMatching(
            new RegExp(
              `^usp: ${refusing.origin}/: site unreachable: every request was refused: ${refusing.origin}/robots\\.txt: ${status} `,
            ),
          ),
        ]);
      } finally {
        await refusing.close();
      }
    });
  }

  it('a refused port: robots.txt is tried twice, the known paths never; -v says each retry', async () => {
    const r = await runCli(['ls', '-v', 'http://127.0.0.1:1/']);
    expect(r.code).toBe(1);
    const retries = r.stderr.split('\n').filter((l) => l.includes('retrying'));
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatch(
      /^usp: info: retrying http:\/\/127\.0\.0\.1:1\/robots\.txt \(attempt 2 of 2\) in \d+ ms: connect ECONNREFUSED/,
    );
    expect(r.stderr).toContain('[unreachable]');
    expect(r.stderr).not.toContain('sitemap.xml');
  });

  it('a host that accepts and never answers: two requests in all, then exit 1', async () => {
    const silent = await startTestServer({ '/robots.txt': () => {} });
    try {
      const r = await runCli(['ls', '--allow-private-networks', '--timeout', '300ms', `${silent.origin}/`]);
      expect(r.code).toBe(1);
      expect(silent.requests).toEqual(['GET /robots.txt', 'GET /robots.txt']);
      expect(r.stderr).toMatch(/site unreachable: .*robots\.txt: Request timed out/);
    } finally {
      await silent.close();
    }
  });

  it('--deadline before any answer is unreachable (exit 1), not an empty site', async () => {
    const silent = await startTestServer({ '/robots.txt': () => {} });
    try {
      const r = await runCli(['ls', '--allow-private-networks', '--deadline', '300ms', `${silent.origin}/`]);
      expect(r.code).toBe(1);
      expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(
        `usp: ${silent.origin}/: site unreachable: the walk's deadline of 300 ms passed`,
      );
    } finally {
      await silent.close();
    }
  });

  it('a walk cut by a budget after something was read exits 0 with a warning naming the budget', async () => {
    const r = await runCli(['ls', ...NET, '--max-sitemaps', '2', '-f', 'ndjson', `${o}/`]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/usp: warning: Walk stopped: the walk's limit of 2 sitemaps was reached/);
  });

  it('exits 0 for a site that answers 404 everywhere (reached, no sitemap)', async () => {
    const empty = await startTestServer();
    try {
      const r = await runCli(['ls', ...NET, `${empty.origin}/`]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${empty.origin}/\n`);
      expect(r.stderr).not.toContain('unreachable');
    } finally {
      await empty.close();
    }
  });

  it('skips robots.txt with -r and the known paths with -k', async () => {
    const noRobots = await runCli(['ls', ...NET, '-r', `${o}/`]);
    expect(noRobots.code).toBe(0);
    // sitemap_index.xml is a known path: found without robots.txt.
    expect(noRobots.stdout.split('\n')[1]).toBe(`\t${o}/sitemap_index.xml`);
    const neither = await runCli(['ls', ...NET, '--no-robots', '--no-known', `${o}/`]);
    expect(neither.stdout).toBe(`${o}/\n`);
  });

  it('walks exactly the --sitemap URLs (repeatable) in every format: no robots.txt, no known paths', async () => {
    const before = server.requests.length;
    const args = ['ls', ...NET, '--sitemap', `${o}/sitemap-a.xml`, '--sitemap', `${o}/sitemap_index.xml`];
    const r = await runCli(args);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        `${o}/`,
        `\t${o}/sitemap-a.xml`,
        `\t\t${o}/a1`,
        `\t\t${o}/a2`,
        `\t${o}/sitemap_index.xml`,
        ...tabtree()
          .split('\n')
          .slice(3, -1)
          .map((l) => l.slice(1))
          // Fetched once per walk: the index's sitemap-a.xml is the one listed first, not read again.
          .filter((l) => l !== `\t\t\t${o}/a1` && l !== `\t\t\t${o}/a2`),
        '',
      ].join('\n'),
    );
    const asked = server.requests.slice(before).map((l) => l.replace('GET ', ''));
    expect(asked).not.toContain('/robots.txt');
    expect(asked).not.toContain('/sitemap.xml');
    expect(new Set(asked)).toEqual(
      new Set(['/sitemap-a.xml', '/sitemap_index.xml', '/sitemap-b.xml.gz', '/missing.xml']),
    );

    const ndjson = await runCli([...args, '-f', 'ndjson']);
    const rows = ndjson.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { url: string; sitemap: string });
    expect(rows.map((row) => row.url).sort()).toEqual(
      [`${o}/a1`, `${o}/a2`, `${o}/b1`, 'https://other.example/b,2'].sort(),
    );
    const pages = await runCli(['ls', ...NET, '-f', 'pages', '-u', '--sitemap', `${o}/sitemap-b.xml.gz`]);
    expect(pages.stdout).toBe('/b1\n/https://other.example/b,2\n');
    // A homepage given as well names the root.
    const rooted = await runCli(['ls', ...NET, '--sitemap', `${o}/custom/map.xml`, `${o}/custom/`]);
    expect(rooted.stdout).toBe(`${o}/\n\t${o}/custom/map.xml\n\t\t${o}/custom-page\n`);
    const bad = await runCli(['ls', ...NET, '--sitemap', 'sitemap.xml']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--sitemap sitemap.xml is not a HTTP(s) URL');
  });

  it('--no-normalize-homepage with a URL that is not a directory appends the / as usp does, with a note', async () => {
    const r = await runCli(['ls', ...NET, '--no-normalize-homepage', '-k', `${o}/sitemap_index.xml`]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(`${o}/sitemap_index.xml/`);
    expect(r.stderr.trimEnd().split('\n')[0]).toBe(
      `usp: note: --no-normalize-homepage: walking ${o}/sitemap_index.xml/ as the homepage, as usp does (to read just the sitemap ${o}/sitemap_index.xml and what it names: usp ls --sitemap ${o}/sitemap_index.xml)`,
    );
    const dir = await runCli(['ls', ...NET, '--no-normalize-homepage', '-k', `${o}/`]);
    expect(dir.code).toBe(0);
    expect(dir.stderr).not.toContain('note:');
    expect(dir.stdout.split('\n')[1]).toBe(`\t${o}/robots.txt`);
  });

  it('probes --extra-known-path (repeatable) along with the built-in known paths', async () => {
    const r = await runCli([
      'ls',
      ...NET,
      '-r',
      '--extra-known-path',
      'custom/map.xml',
      '--extra-known-path',
      'nothing-here.xml',
      `${o}/`,
    ]);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines).toContain(`\t${o}/sitemap_index.xml`);
    const custom = lines.indexOf(`\t${o}/custom/map.xml`);
    expect(lines[custom + 1]).toBe(`\t\t${o}/custom-page`);
    expect(r.stdout).not.toContain('nothing-here');
    // usp: the extra paths are known paths, so -k turns them off too.
    const off = await runCli(['ls', ...NET, '-r', '-k', '--extra-known-path', 'custom/map.xml', `${o}/`]);
    expect(off.stdout).toBe(`${o}/\n`);
  });

  it('stops at --max-pages and keeps what it read', async () => {
    const r = await runCli([
      'ls',
      ...NET,
      '-k',
      '--concurrency',
      '1',
      '--max-pages',
      '1',
      '-f',
      'pages',
      `${o}/`,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${o}/a1\n`);
  });

  it('lists the same tree with --parse-workers 0 and 2, and refuses a bad count', async () => {
    const none = await runCli(['ls', ...NET, '-k', '--parse-workers', '0', `${o}/`]);
    const two = await runCli(['ls', ...NET, '-k', '--parse-workers', '2', `${o}/`]);
    expect(none.code).toBe(0);
    expect(two.stdout).toBe(none.stdout);
    const bad = await runCli(['ls', ...NET, '--parse-workers', '-1', `${o}/`]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--parse-workers');
  });

  it('writes logs to --log-file instead of stderr', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'usp-cli-'));
    try {
      const log = join(dir, 'usp.log');
      const r = await runCli(['ls', ...NET, '-v', '-l', log, `${o}/`]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(tabtree());
      expect(r.stderr).toBe('');
      const text = readFileSync(log, 'utf8');
      expect(text).toMatch(/usp: warning: .*\[invalid-changefreq\]/);
      expect(text).toMatch(/usp: info: Invalid sitemap: .*missing\.xml/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the private exception is the homepage origin: another port of 127.0.0.1 is refused, however spelt', async () => {
    const home = await startTestServer();
    const other = await startTestServer({
      '/secret.xml': { headers: XML, body: urlset(['<url><loc>http://example.com/secret</loc></url>']) },
    });
    try {
      const p = other.port;
      const spellings = [`http://127.0.0.1:${p}`, `http://127.1:${p}`, `http://2130706433:${p}`];
      home.route('/robots.txt', {
        headers: { 'Content-Type': 'text/plain' },
        body: `${spellings.map((o) => `Sitemap: ${o}/secret.xml`).join('\n')}\nSitemap: ${home.origin}/moved.xml\n`,
      });
      // A redirect from the allowed origin to the other port is refused too.
      home.route('/moved.xml', { status: 302, headers: { Location: `http://127.0.0.1:${p}/secret.xml` } });
      const r = await runCli(['ls', '--retries', '1', '-k', '-f', 'json', `${home.origin}/`]);
      expect(r.code, r.stderr).toBe(0);
      expect(other.requests).toEqual([]);
      expect(r.stdout).not.toContain('example.com/secret');
      const children = JSON.parse(r.stdout).subSitemaps[0].subSitemaps;
      expect(children).toHaveLength(4);
      // The other spellings are the same URL once normalised: fetched once (refused) per walk.
      expect(
        children.map((c: { type: string; reason: string }) => [
          c.type,
          /Refused to connect to 127\.0\.0\.1|fetched already/.test(c.reason),
        ]),
      ).toEqual(Array(4).fill(['InvalidSitemap', true]));
      expect(children[0].reason).toContain('Refused to connect to 127.0.0.1');
      expect(children[3].reason).toContain('Refused to connect to 127.0.0.1');
      // The homepage's own origin written another way (127.1, the same port) is still the homepage.
      home.route('/own.xml', { headers: XML, body: urlset([`<url><loc>${home.origin}/own</loc></url>`]) });
      home.route('/robots.txt', {
        headers: { 'Content-Type': 'text/plain' },
        body: `Sitemap: http://127.1:${home.port}/own.xml\n`,
      });
      const same = await runCli(['ls', '--retries', '1', '-k', '-f', 'json', `${home.origin}/`]);
      expect(JSON.parse(same.stdout).subSitemaps[0].subSitemaps[0].type).toBe('PagesXMLSitemap');
    } finally {
      await home.close();
      await other.close();
    }
  });

  it('lets the private host it was given through, but no other private address unless --allow-private-networks', async () => {
    const lan = await startTestServer();
    try {
      // 127.0.0.2 is loopback too, but not the host the user named.
      lan.route('/robots.txt', {
        headers: { 'Content-Type': 'text/plain' },
        body: `Sitemap: ${lan.origin}/own.xml\nSitemap: http://127.0.0.2:${lan.port}/other.xml\n`,
      });
      lan.route('/own.xml', { headers: XML, body: urlset([`<url><loc>${lan.origin}/own-page</loc></url>`]) });
      const guarded = await runCli(['ls', '--retries', '1', '-k', '-f', 'json', `${lan.origin}/`]);
      expect(guarded.code).toBe(0);
      const [own, other] = JSON.parse(guarded.stdout).subSitemaps[0].subSitemaps;
      expect(own).toMatchObject({ type: 'PagesXMLSitemap', url: `${lan.origin}/own.xml` });
      expect(other.type).toBe('InvalidSitemap');
      expect(other.reason).toContain('Refused to connect to 127.0.0.2');
      const open = await runCli([
        'ls',
        '--retries',
        '1',
        '-k',
        '-f',
        'json',
        '--allow-private-networks',
        `${lan.origin}/`,
      ]);
      expect(open.code, open.stderr).toBe(0);
      const opened = JSON.parse(open.stdout).subSitemaps[0].subSitemaps[1];
      expect(opened.type).toBe('InvalidSitemap');
      expect(opened.reason).not.toContain('Refused to connect');
    } finally {
      await lan.close();
    }
  });
});
