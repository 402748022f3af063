import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  type ClosingMode,
  type ClosingServer,
  compressibleSitemapGz,
  lastJsonLine,
  runNode,
  startClosingServer,
} from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// nodejs/undici#5360: a server that closes the connection after a body our reader has not taken
// yet (the parser paused by backpressure) killed the process with an uncatchable AssertionError
// from undici's socket 'end' handler. The reader runs in a child process, since what is at stake
// is whether that process survives; the servers live here.

const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url));
if (!existsSync(DIST))
  throw new Error(`${DIST} is missing: run \`pnpm --filter @usp-ts/fetcher build\` first`);

/** Rounds per server: before the fix the first round of each crashed. */
const ROUNDS = 12;
const HANG_GUARD_MS = 60_000;

// A slow reader: a few event-loop turns per chunk, time in which the whole body reaches the
// socket, the parser pauses on it and the server's FIN arrives.
const CHILD = `
const [dist, jobsJson, rounds] = process.argv.slice(2);
const { createWebClient } = await import(dist);
const jobs = JSON.parse(jobsJson);
const client = createWebClient({ allowPrivateNetworks: true, retries: 1 });
const results = [];
for (const job of jobs) {
  const r = { url: job.url, complete: 0, failed: [], wrong: [] };
  for (let i = 0; i < Number(rounds); i++) {
    const res = await client.get(job.url);
    if (res.kind !== 'ok') { r.failed.push(res.message); continue; }
    let n = 0;
    try {
      for await (const c of res.body) {
        n += c.length;
        for (let k = 0; k < 5; k++) await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (e) {
      r.failed.push(e.code + ': ' + e.message);
      continue;
    }
    if (n === job.bytes) r.complete++;
    else r.wrong.push(n);
  }
  results.push(r);
}
await client.close();
process.stdout.write(JSON.stringify({ results }) + '\\n');
`;

const MODES: ClosingMode[] = ['connection-close', 'http1.0', 'http1.0-eof'];
let dir = '';
let script = '';
const servers = new Map<ClosingMode, ClosingServer>();
let xmlBytes = 0;
let gzBytes = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fetcher-paused-'));
  script = join(dir, 'child.mjs');
  writeFileSync(script, CHILD);
  const { xml, gz } = compressibleSitemapGz('https://www.example.com', 50_000);
  xmlBytes = xml.length;
  gzBytes = gz.length;
  for (const mode of MODES) {
    servers.set(
      mode,
      await startClosingServer(mode, {
        // As sitemaps usually come: a .gz file, decompressed by the walk, not the client.
        '/sitemap.xml.gz': { body: gz, contentType: 'application/gzip' },
        // The same bytes as a Content-Encoding, which the client undoes while reading.
        '/sitemap.xml': { body: gz, contentType: 'application/xml', contentEncoding: 'gzip' },
        // Announces more than it sends: must end in an error, never as a complete body.
        '/short.xml.gz': { body: gz, contentType: 'application/gzip', shortBy: 1000 },
      }),
    );
  }
});

afterAll(async () => {
  await Promise.all([...servers.values()].map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

interface RoundsResult {
  url: string;
  complete: number;
  failed: string[];
  wrong: number[];
}

async function readRounds(jobs: { url: string; bytes: number }[]): Promise<RoundsResult[]> {
  const r = await runNode([script, pathToFileURL(DIST).href, JSON.stringify(jobs), String(ROUNDS)], {
    guardMs: HANG_GUARD_MS,
  });
  expect(r.stderr).not.toContain('AssertionError');
  expect({ code: r.code, hung: r.hung }).toEqual({ code: 0, hung: false });
  return (lastJsonLine(r)?.results ?? []) as RoundsResult[];
}

describe('a server that closes the connection after a body read slowly', () => {
  for (const mode of MODES) {
    it(`${mode}: every round of a large gzipped sitemap completes, the process lives`, async () => {
      const origin = servers.get(mode)?.origin;
      const results = await readRounds([
        { url: `${origin}/sitemap.xml.gz`, bytes: gzBytes },
        { url: `${origin}/sitemap.xml`, bytes: xmlBytes },
      ]);
      expect(results.map((x) => [x.complete, x.failed, x.wrong])).toEqual([
        [ROUNDS, [], []],
        [ROUNDS, [], []],
      ]);
    });
  }

  for (const mode of ['connection-close', 'http1.0'] as const) {
    it(`${mode}: a body shorter than its Content-Length ends in an error, not as complete`, async () => {
      const origin = servers.get(mode)?.origin;
      const [r] = await readRounds([{ url: `${origin}/short.xml.gz`, bytes: gzBytes }]);
      expect(r?.complete).toBe(0);
      expect(r?.failed).toHaveLength(ROUNDS);
      expect(r?.failed[0]).toMatch(/^USP_CONNECTION: .*content-length/);
    });
  }
});
