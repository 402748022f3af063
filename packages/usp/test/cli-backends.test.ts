import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestRedis, type TestRedis } from '@usp-ts/test-redis';
import { type SiteFarm, startSiteFarm } from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli-helpers.js';

// `--state` and `--out` go through one resolver for usp batch and usp worker: a plain path or
// sqlite:FILE is SQLite, redis://… is Redis, anything else is one usage line.
let redis: TestRedis;
let farm: SiteFarm;
const dir = mkdtempSync(join(tmpdir(), 'usp-backends-'));
const sitesFile = join(dir, 'sites.txt');

const FAST = ['--allow-private-networks', '--timeout', '1500ms', '--retries', '1', '--site-deadline', '4s'];

function pageCount(out: string): number {
  const path = join(out, 'pages.ndjson');
  if (!existsSync(path)) return 0;
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '').length;
}

beforeAll(async () => {
  redis = await startTestRedis();
  farm = await startSiteFarm({ sites: 6, seed: 5, octet: 83, pages: [5, 20] });
  writeFileSync(
    sitesFile,
    farm.sites
      .filter((s) => s.kind !== 'hang')
      .map((s) => s.homepage)
      .join('\n'),
  );
});
afterAll(async () => {
  await farm?.close();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('usp batch --state', () => {
  it.each([
    ['redis://', () => `${redis.url}/3`],
    ['sqlite:', () => `sqlite:${join(dir, 'state.sqlite')}`],
  ])('keeps the state in %s: the second run of unchanged sites writes no page', async (_, spec) => {
    const run = async (name: string) => {
      const out = join(dir, name);
      const r = await runCli(['batch', '--out', out, '--state', spec(), ...FAST, sitesFile]);
      expect(r.code, r.stderr).toBe(0);
      return pageCount(out);
    };
    const name = spec().startsWith('redis') ? 'redis' : 'sqlite';
    expect(await run(`${name}-1`)).toBeGreaterThan(0);
    expect(await run(`${name}-2`)).toBe(0);
  });

  it('refuses a scheme it has no driver for with one usage line (exit 2) naming the forms it takes', async () => {
    const r = await runCli([
      'batch',
      '--out',
      join(dir, 'bad'),
      '--state',
      'mongodb://x/y',
      ...FAST,
      sitesFile,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /usp: error: option --state: the scheme mongodb: is not supported here \("mongodb:\/\/x\/y"\); expected FILE, sqlite:FILE, redis:\/\/HOST\[:PORT\]\[\/DB\]\n$/,
    );
    expect(existsSync(join(dir, 'bad'))).toBe(false);
  });

  it('refuses an --out scheme it has no driver for, in usp worker too', async () => {
    const r = await runCli(['worker', '--queue', redis.url, '--out', 'ftp://x/', '--exit-when-idle']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /usp: error: option --out: the scheme ftp: is not supported here .*expected FILE.sqlite, FILE.db, sqlite:FILE, postgres:\/\/USER@HOST\[:PORT\]\/DB, postgres:, DIR\n$/,
    );
  });
});
