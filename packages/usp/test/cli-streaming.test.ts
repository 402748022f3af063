import { spawn } from 'node:child_process';
import { startTestServer } from '@usp-ts/test-server';
import { describe, expect, it } from 'vitest';
import { CLI, runCli, spawnCli } from './cli-helpers.js';

// How `usp ls` delivers its output: `pages` as pages arrive, the finished-tree formats without
// ever holding a whole sitemap's pages. Through the built CLI against a server on 127.0.0.1.

const NET = ['--allow-private-networks', '--retries', '1', '--timeout', '30s', '--no-progress', '-k'];
const XML = { 'Content-Type': 'application/xml' };
const TEXT = { 'Content-Type': 'text/plain' };

const urlset = (urls: string[]): string =>
  `<?xml version="1.0"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.map((u) => `<url><loc>${u}</loc><lastmod>2024-01-02</lastmod></url>`).join('')}</urlset>\n`;

/**
 * A site of two sitemaps, robots.txt naming a.xml (50 pages) then b.xml, whose answer (`b`, its
 * pages) waits until `release` is called. Call `close` when done (it releases first).
 */
async function siteWithHeldSitemap(pagesOfB: (origin: string) => string[]) {
  const server = await startTestServer();
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const o = server.origin;
  const a = Array.from({ length: 50 }, (_, i) => `${o}/a/${i}`);
  const b = pagesOfB(o);
  server.route('/robots.txt', { headers: TEXT, body: `Sitemap: ${o}/a.xml\nSitemap: ${o}/b.xml\n` });
  server.route('/a.xml', { headers: XML, body: urlset(a) });
  server.route('/b.xml', async (_req, res) => {
    await held;
    res.writeHead(200, XML);
    res.end(urlset(b));
  });
  return {
    o,
    a,
    b,
    release: () => release(),
    close: async () => {
      release();
      await server.close();
    },
  };
}

describe('usp ls output delivery', () => {
  it('-f pages prints each page as it arrives: the first line comes while the last sitemap is held', async () => {
    // The last sitemap answers only once the test has read a line of output.
    const site = await siteWithHeldSitemap((o) => [`${o}/b/late`, `${o}/a/0`]);
    const { o, a, b, release } = site;
    try {
      const child = spawnCli(['ls', ...NET, '-f', 'pages', `${o}/`]);
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      let out = '';
      let linesBeforeRelease = -1;
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (d: string) => {
        out += d;
        if (linesBeforeRelease < 0 && out.includes('\n')) {
          linesBeforeRelease = out.split('\n').length - 1;
          release();
        }
      });
      expect(await exited).toBe(0);
      expect(linesBeforeRelease).toBeGreaterThan(0);
      // The lines of the whole walk, duplicates kept, as the tree-ordered formats list them.
      const lines = out.trimEnd().split('\n');
      expect([...lines].sort()).toEqual([...a, ...b].sort());
      const tree = await runCli(['ls', ...NET, '-f', 'tabtree', `${o}/`]);
      const treePages = tree.stdout
        .split('\n')
        .filter((l) => l.startsWith('\t\t\t'))
        .map((l) => l.trim());
      expect([...lines].sort()).toEqual(treePages.sort());
    } finally {
      await site.close();
    }
  });

  it('tabtree prints each sitemap once it and those before it are read: while the last one is held', async () => {
    const site = await siteWithHeldSitemap((o) => [`${o}/b/late`]);
    const { o, a, release } = site;
    try {
      const child = spawnCli(['ls', ...NET, `${o}/`]);
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      let out = '';
      let beforeRelease: string | null = null;
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (d: string) => {
        out += d;
        // a.xml's last page printed: the tree up to there is out, b.xml not answered yet.
        if (beforeRelease === null && out.includes(`\t\t\t${a[49]}\n`)) {
          beforeRelease = out;
          release();
        }
      });
      expect(await exited).toBe(0);
      const expected = [
        `${o}/`,
        `\t${o}/robots.txt`,
        `\t\t${o}/a.xml`,
        ...a.map((u) => `\t\t\t${u}`),
        `\t\t${o}/b.xml`,
        `\t\t\t${o}/b/late`,
        '',
      ].join('\n');
      expect(beforeRelease).toBe(expected.slice(0, expected.indexOf(`\t\t${o}/b.xml`)));
      expect(out).toBe(expected);
    } finally {
      await site.close();
    }
  });

  it('tabtree and json print a sitemap far larger than the heap: pages are read back in bounded chunks', async () => {
    const server = await startTestServer();
    try {
      const o = server.origin;
      // 200,000 pages hold ~43 MB as objects (measured on Node 20 and 24), over the 32 MB old
      // generation given below by far; a print that reads them back in bounded chunks stays near
      // the CLI's own ~9 MB. A tighter pair (80,000 pages, 20 MB: 17 MB of pages) failed on Node 22
      // and 24 when marking ran long under load, since V8 counts what is allocated during
      // incremental marking as live until the next collection.
      const n = 200_000;
      const urls = Array.from({ length: n }, (_, i) => `${o}/p/${i}`);
      server.route('/robots.txt', { headers: TEXT, body: `Sitemap: ${o}/big.xml\n` });
      server.route('/big.xml', { headers: XML, body: urlset(urls) });
      for (const format of ['tabtree', 'json']) {
        const child = spawn(
          process.execPath,
          ['--max-old-space-size=32', CLI, 'ls', ...NET, '-f', format, `${o}/`],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let lines = 0;
        let last = '';
        let stderr = '';
        child.stdout.setEncoding('utf8');
        child.stdout.on('data', (d: string) => {
          for (let at = d.indexOf('\n'); at >= 0; at = d.indexOf('\n', at + 1)) lines++;
          last = (last + d).slice(-200);
        });
        child.stderr.on('data', (d: Buffer) => {
          stderr = (stderr + d.toString()).slice(-500);
        });
        const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
        expect({ format, code, stderr: code === 0 ? '' : stderr }).toEqual({ format, code: 0, stderr: '' });
        if (format === 'tabtree') {
          expect(lines).toBe(3 + n);
          expect(last.endsWith(`\n\t\t\t${o}/p/${n - 1}\n`)).toBe(true);
        } else {
          expect(last.endsWith('\n}\n')).toBe(true);
        }
      }
    } finally {
      await server.close();
    }
  }, 120_000);
});
