import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestRedis } from '@usp-ts/test-redis';
import { startTestServer, type TestServer } from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli-helpers.js';

// `--plugin MODULE` through the built CLI: a third-party extension loaded from a file, in the
// main thread and in the parse workers.

const NET = ['--allow-private-networks', '--retries', '1', '--timeout', '5s'];
const RECIPE = 'https://example.com/schemas/recipe/1.0';
const PLUGIN = `
const NS = ${JSON.stringify(RECIPE)};
export default () => [{
  name: 'recipe',
  namespaces: [NS],
  create: () => ({
    open() {},
    close(el, text, draft) {
      if (el.local === 'minutes') draft.extensions = { ...draft.extensions, minutes: Number(text) };
    },
  }),
}];
`;

function urlset(origin: string, name: string, n: number): string {
  const entries = Array.from(
    { length: n },
    (_, i) =>
      `<url><loc>${origin}/${name}/${i}</loc><r:minutes>${i}</r:minutes><!-- ${'padding '.repeat(8)} --></url>`,
  );
  return `<?xml version="1.0"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:r="${RECIPE}">\n${entries.join('\n')}\n</urlset>\n`;
}

let server: TestServer;
let dir: string;
let o: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'usp-plugin-'));
  writeFileSync(join(dir, 'recipe.mjs'), PLUGIN);
  writeFileSync(join(dir, 'not-a-plugin.mjs'), 'export default { hello: 1 };\n');
  writeFileSync(join(dir, 'broken.mjs'), 'export default (;\n');
  server = await startTestServer();
  o = server.origin;
  const xml = { 'Content-Type': 'application/xml' };
  server.route('/robots.txt', { body: `Sitemap: ${o}/a.xml\nSitemap: ${o}/b.xml\n` });
  // Two sitemaps over 64 KiB each, fetched together: one is parsed on a worker thread.
  server.route('/a.xml', { headers: xml, body: urlset(o, 'a', 800) });
  server.route('/b.xml', { headers: xml, body: urlset(o, 'b', 800) });
  writeFileSync(join(dir, 'small.xml'), urlset('https://example.com', 's', 2));
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

type Row = { url: string; extensions?: { minutes?: number } };
const rows = (stdout: string): Row[] =>
  stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);

describe('--plugin', () => {
  it('adds a third-party extension to ls, parse workers on', async () => {
    const args = ['ls', ...NET, '-f', 'ndjson', '--parse-workers', '2', '--concurrency', '2', '-k'];
    const without = rows((await runCli([...args, `${o}/`])).stdout);
    expect(without).toHaveLength(1600);
    expect(without.filter((r) => r.extensions !== undefined)).toEqual([]);
    const r = await runCli([...args, '--plugin', join(dir, 'recipe.mjs'), `${o}/`]);
    expect(r.code).toBe(0);
    const withPlugin = rows(r.stdout);
    expect(withPlugin).toHaveLength(1600);
    for (const row of withPlugin) expect(row.extensions?.minutes).toBe(Number(row.url.split('/').at(-1)));
    // The CSV carries the extension's fields too.
    const csv = await runCli(['ls', ...NET, '-f', 'csv', '-k', '--plugin', join(dir, 'recipe.mjs'), `${o}/`]);
    expect(csv.stdout.split('\n')[1]).toMatch(/,"\{""minutes"":\d+\}"$/);
  });

  it('works for parse and validate, a path relative to the working directory included', async () => {
    const parsed = await runCli(['parse', '-f', 'ndjson', '--plugin', './recipe.mjs', 'small.xml'], {
      cwd: dir,
    });
    expect(parsed.code).toBe(0);
    expect(rows(parsed.stdout).map((row) => row.extensions?.minutes)).toEqual([0, 1]);
    const validated = await runCli(['validate', '-f', 'json', '--plugin', './recipe.mjs', 'small.xml'], {
      cwd: dir,
    });
    expect(validated.code).toBe(0);
    expect(JSON.parse(validated.stdout).findings).toEqual([]);
  });

  it('says in one line why a module cannot be loaded, exit 2', async () => {
    const cases: [string, string][] = [
      ['./missing.mjs', 'option --plugin ./missing.mjs: cannot import it'],
      ['no-such-package-usp', 'option --plugin no-such-package-usp: cannot find it from'],
      ['./not-a-plugin.mjs', 'option --plugin ./not-a-plugin.mjs: its default export is neither'],
      ['./broken.mjs', 'option --plugin ./broken.mjs: cannot import it'],
    ];
    for (const [spec, message] of cases) {
      const r = await runCli(['parse', '--plugin', spec, 'small.xml'], { cwd: dir });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      const last = r.stderr.trimEnd().split('\n');
      expect(last).toHaveLength(2);
      expect(last[1]).toContain(`usp: error: ${message}`);
    }
  });

  it("collects a third-party extension's field through usp batch and usp worker alike", {
    timeout: 120_000,
  }, async () => {
    writeFileSync(join(dir, 'sites.txt'), `${o}/\n`);
    const expectMinutes = (file: string) => {
      const pages = rows(readFileSync(file, 'utf8'));
      expect(pages).toHaveLength(1600);
      for (const row of pages) expect(row.extensions?.minutes).toBe(Number(row.url.split('/').at(-1)));
    };
    const local = await runCli(
      ['batch', ...NET, '-k', '--plugin', './recipe.mjs', '--out', 'local', 'sites.txt'],
      {
        cwd: dir,
      },
    );
    expect(local.code, local.stderr).toBe(0);
    expectMinutes(join(dir, 'local', 'pages.ndjson'));

    const redis = await startTestRedis();
    try {
      const queue = ['--queue', redis.url, '--queue-name', 'plugin'];
      const produced = await runCli(['batch', ...queue, '--no-wait', 'sites.txt'], { cwd: dir });
      expect(produced.code, produced.stderr).toBe(0);
      const worker = await runCli(
        [
          'worker',
          ...queue,
          ...NET,
          '-k',
          '--exit-when-idle',
          '--plugin',
          './recipe.mjs',
          '--out',
          'queued',
          '--worker-id',
          'w',
        ],
        { cwd: dir },
      );
      expect(worker.code, worker.stderr).toBe(0);
      expectMinutes(join(dir, 'queued', 'w', 'pages.ndjson'));
      // Refused as usp ls refuses it, before the worker connects or the batch reads its list.
      for (const command of [
        ['worker', ...queue, '--out', 'queued'],
        ['batch', '--out', 'bad', 'sites.txt'],
      ]) {
        const r = await runCli([...command, '--plugin', './not-a-plugin.mjs'], { cwd: dir });
        expect(r.code).toBe(2);
        expect(r.stderr).toContain(
          'usp: error: option --plugin ./not-a-plugin.mjs: its default export is neither',
        );
      }
    } finally {
      await redis.stop();
    }
  });

  it('is listed in the help of ls, parse, validate, batch and worker', async () => {
    for (const command of ['ls', 'parse', 'validate', 'batch', 'worker']) {
      expect((await runCli([command, '--help'])).stdout).toContain('--plugin MODULE');
    }
  });
});
