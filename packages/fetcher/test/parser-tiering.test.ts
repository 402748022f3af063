import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runNode, startTestServer, type TestServer } from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// V8 compiles undici's HTTP parser (WebAssembly) when the first connection is made. Whether it
// is later re-compiled by the optimising compiler shows only in V8's own trace, so a child
// process switches the trace on (from inside: a wasm flag on its command line would make the
// client leave V8's wasm settings alone) and parses many responses' headers.
// `--predictable` runs V8's background compile jobs on the main thread before the process
// ends: a re-compile the parser asked for is always traced, however loaded the machine is.

/** The built package, as users run it; `pnpm test` (turbo) builds it first. */
const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url));
if (!existsSync(DIST))
  throw new Error(`${DIST} is missing: run \`pnpm --filter @usp-ts/fetcher build\` first`);

/** 300 answers with 1 KB of headers: several times what exhausted the largest tiering budget V8 takes. */
const REQUESTS = 300;

const CHILD = `
import { setFlagsFromString } from 'node:v8';
const [dist, origin, n] = process.argv.slice(2);
const { createWebClient } = await import(dist);
setFlagsFromString('--trace-wasm-compilation-times');
const client = createWebClient({ allowPrivateNetworks: true });
let notModified = 0;
for (let i = 0; i < Number(n); i++) {
  const res = await client.get(origin + '/same?' + i);
  if (res.kind === 'not-modified') notModified++;
}
await client.close();
console.log(JSON.stringify({ notModified }));
`;

let dir = '';
let server: TestServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fetcher-parser-tiering-'));
  writeFileSync(join(dir, 'child.mjs'), CHILD);
  server = await startTestServer({
    '/same': { status: 304, headers: { etag: '"1"', 'x-padding': 'x'.repeat(900) } },
  });
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("undici's HTTP parser", () => {
  it('stays on its baseline code however many headers it parses (no optimising re-compile)', async () => {
    const r = await runNode(
      ['--predictable', join(dir, 'child.mjs'), pathToFileURL(DIST).href, server.origin, String(REQUESTS)],
      { guardMs: 60_000 },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`{"notModified":${REQUESTS}}`);
    // The parser was compiled (the trace works) ...
    expect(r.stdout).toMatch(/Compiled function \S+ using Liftoff/);
    // ... and never by the optimising compiler.
    expect(r.stdout).not.toMatch(/using TurboFan/);
  });
});
