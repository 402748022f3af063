import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runNode, type SiteFarm, startSiteFarm } from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, cliEnv, writeAnsweringSites } from './cli-helpers.js';

// `usp batch` imports the format packages only when a site first has a document to parse (core's
// RegistryLoader): a run where nothing changed answers 304 everywhere and parses nothing. What a
// process loaded through the ES module loader is seen by a load hook given to --import, which
// sends each URL to the main thread; the probe prints the format packages it saw at exit.

let farm: SiteFarm;
const dir = mkdtempSync(join(tmpdir(), 'usp-batch-lazy-'));
const sitesFile = join(dir, 'sites.txt');
const state = join(dir, 'state.sqlite');
const probe = join(dir, 'probe.mjs');

beforeAll(async () => {
  farm = await startSiteFarm({ sites: 12, seed: 5, octet: 82, pages: [5, 30] });
  writeAnsweringSites(sitesFile, farm);
  writeFileSync(
    probe,
    `import { register } from 'node:module';
const { port1, port2 } = new MessageChannel();
const formats = new Set();
port1.on('message', (url) => {
  const m = /packages\\/((?:format|ext)-[a-z-]+)\\//.exec(url) ?? /@usp-ts\\/((?:format|ext)-[a-z-]+)\\//.exec(url);
  if (m !== null) formats.add(m[1]);
});
port1.unref();
register(
  'data:text/javascript,' +
    encodeURIComponent('let port; export function initialize(d) { port = d.port; } export async function load(url, context, next) { port.postMessage(url); return next(url, context); }'),
  { data: { port: port2 }, transferList: [port2] },
);
process.on('exit', () => process.stderr.write('@@formats ' + JSON.stringify([...formats].sort()) + '\\n'));
`,
  );
});

afterAll(async () => {
  await farm.close();
  rmSync(dir, { recursive: true, force: true });
});

async function batchRun(out: string) {
  const run = await runNode(
    [
      '--import',
      probe,
      CLI,
      'batch',
      '--out',
      join(dir, out),
      '--state',
      state,
      '--allow-private-networks',
      '--timeout',
      '5s',
      '--retries',
      '1',
      sitesFile,
    ],
    { guardMs: 60_000, env: cliEnv() },
  );
  expect(run.code, run.stderr).toBe(0);
  const formats = JSON.parse(/@@formats (.*)/.exec(run.stderr)?.[1] ?? 'null') as string[] | null;
  const rows = (file: string) =>
    readFileSync(join(dir, out, file), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { formats, sites: rows('sites.ndjson'), pages: rows('pages.ndjson') };
}

describe('usp batch and the format packages', () => {
  it('loads them for the first document it parses, and not at all in a run where nothing changed', async () => {
    const fresh = await batchRun('fresh');
    expect(fresh.pages.length).toBeGreaterThan(0);
    expect(fresh.formats).toEqual([
      'ext-google-image',
      'ext-google-news',
      'ext-google-video',
      'format-atom',
      'format-robots',
      'format-rss',
      'format-text',
      'format-xml-sitemap',
    ]);
    const again = await batchRun('again');
    expect(again.formats).toEqual([]);
    expect(again.pages).toEqual([]);
    // Every site ended as before, with nothing to parse.
    const status = (rows: Record<string, unknown>[]) => rows.map((r) => [r.site, r.status]).sort();
    expect(status(again.sites)).toEqual(status(fresh.sites));
    expect(again.sites.every((r) => r.status !== 'ok' || r.notModified === r.requests)).toBe(true);
  });
});
