import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { lastJsonLine, runNode } from '@usp-ts/test-server';
import { describe, expect, it } from 'vitest';

// What importing the package loads is about a fresh process, so it is looked at in a child.

/** Tests run what users run: the built package. `pnpm test` (turbo) builds it first. */
const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url));
if (!existsSync(DIST)) throw new Error(`${DIST} is missing: run \`pnpm --filter usp build\` first`);

const CHILD = `
import { createRequire } from 'node:module';
const cache = createRequire(import.meta.url).cache;
const undiciLoaded = () => Object.keys(cache).some((f) => /[\\\\/]undici[\\\\/]/.test(f));
const usp = await import(process.argv[1]);
const afterImport = undiciLoaded();
const parsed = await usp.parseSitemapDocument(
  '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://a.example/</loc></url></urlset>',
);
const afterParse = undiciLoaded();
const client = usp.createWebClient();
const afterClient = undiciLoaded();
await client.close();
process.stdout.write(JSON.stringify({ afterImport, afterParse, afterClient, pages: parsed.sitemap.pages.length }) + '\\n');
`;

describe('importing usp', () => {
  it('loads no HTTP client until one is created: parsing a document never loads undici', async () => {
    const run = await runNode(['--input-type=module', '--eval', CHILD, pathToFileURL(DIST).href], {
      guardMs: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(lastJsonLine(run)).toEqual({
      afterImport: false,
      afterParse: false,
      afterClient: true,
      pages: 1,
    });
  });

  it('loads sax through require when a document first needs it, and luxon only for a date in a loose form', async () => {
    // A load hook sees what goes through the ES module loader (Node 20's hooks do not see
    // `require`): sax reaching it as CommonJS is the scan of its source core's sax-module.cjs
    // avoids, ~20 ms of CPU in the main thread and again in each parse worker. luxon reads only
    // the loose date forms, and loading it costs ~7 ms and 1 MiB a thread.
    const hooks = `export async function load(url, context, next) {
      const r = await next(url, context);
      if (r.format === 'commonjs' && /[\\\\/]sax[\\\\/]lib[\\\\/]sax\\.js$/.test(url)) throw new Error('sax.js through the ES module loader');
      if (/[\\\\/]luxon[\\\\/]/.test(url)) throw new Error('luxon through the ES module loader');
      return r;
    }`;
    const child = `
import { createRequire, register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(process.argv[2]));
const cache = createRequire(import.meta.url).cache;
const luxonLoaded = () => Object.keys(cache).some((f) => /[\\\\/]luxon[\\\\/]/.test(f));
const saxLoaded = () => Object.keys(cache).some((f) => /[\\\\/]sax[\\\\/]lib[\\\\/]sax\\.js$/.test(f));
const usp = await import(process.argv[1]);
// A batch run where every answer is a 304 parses nothing: sax is not loaded for it.
const saxAtImport = saxLoaded();
const page = (lastmod) => usp.parseSitemapDocument(
  '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://a.example/</loc><lastmod>' + lastmod + '</lastmod></url></urlset>',
).then((p) => p.sitemap.pages[0].lastModified?.toISOString() ?? null);
const w3c = await page('2024-05-08T08:53:11Z');
const afterW3c = luxonLoaded();
const loose = await page('May 8, 2024 8:53 PM');
const afterLoose = luxonLoaded();
// A well-formed sitemap is read by core's fast path: sax loads with the first document that needs it.
const saxAfterParse = saxLoaded();
await usp.parseSitemapDocument('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://a.example/&nbsp;</loc></url></urlset>');
process.stdout.write(JSON.stringify({ saxAtImport, saxAfterParse, saxAfterNbsp: saxLoaded(), w3c, afterW3c, loose, afterLoose }) + '\\n');
`;
    const run = await runNode(['--input-type=module', '--eval', child, pathToFileURL(DIST).href, hooks], {
      guardMs: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(lastJsonLine(run)).toEqual({
      saxAtImport: false,
      saxAfterParse: false,
      saxAfterNbsp: true,
      w3c: '2024-05-08T08:53:11+00:00',
      afterW3c: false,
      loose: '2024-05-08T20:53:00Z',
      afterLoose: true,
    });
  });
});

describe('the parse worker’s modules', () => {
  it('load none of core’s tree walk: the worker and the plugins import `@usp-ts/core/parse`', async () => {
    // What worker.js imports besides node: modules, loaded with a hook that fails on any module of
    // core's walk (or core's main entry point, which re-exports it).
    const hooks = `export async function load(url, context, next) {
      if (/[\\\\/]core[\\\\/]dist[\\\\/](walk[\\\\/]|index\\.js$)/.test(url)) throw new Error('loaded ' + url);
      return next(url, context);
    }`;
    const child = `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(process.argv[2]));
const dist = process.argv[1];
for (const m of ['plugins/defaults.js', 'plugins/modules.js', 'pages/codec.js', 'pages/records.js', 'node/gunzip.js']) {
  await import(new URL(m, dist).href);
}
const { createDefaultRegistry } = await import(new URL('plugins/defaults.js', dist).href);
const { parseDocument } = await import('@usp-ts/core/parse');
const doc = await parseDocument({
  url: 'https://a.example/s.xml',
  body: '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://a.example/</loc></url></urlset>',
  registry: createDefaultRegistry(),
});
process.stdout.write(JSON.stringify({ type: doc.type, pages: doc.pageCount }) + '\\n');
`;
    const distDir = pathToFileURL(`${fileURLToPath(new URL('../dist/', import.meta.url))}/`).href;
    const run = await runNode(['--input-type=module', '--eval', child, distDir, hooks], {
      guardMs: 30_000,
      cwd: fileURLToPath(new URL('..', import.meta.url)),
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(lastJsonLine(run)).toEqual({ type: 'PagesXMLSitemap', pages: 1 });
  });
});
