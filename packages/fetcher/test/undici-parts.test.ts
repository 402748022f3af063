import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { lastJsonLine, runNode, startTestServer } from '@usp-ts/test-server';
import type * as Undici from 'undici';
import { describe, expect, it } from 'vitest';
import { undiciCore } from '../src/undici.js';

// The fetcher loads three of undici's own modules instead of its entry (which loads every feature).
// If an undici update moved or changed them, these are no longer the entry's own objects.
describe('the undici parts the fetcher loads', () => {
  it('are the very Client, buildConnector and request that undici exports', () => {
    const parts = undiciCore();
    const entry = createRequire(import.meta.url)('undici') as typeof Undici;
    expect(parts.Client).toBe(entry.Client);
    expect(parts.buildConnector).toBe(entry.buildConnector);
    expect(parts.request).toBe(entry.Dispatcher.prototype.request);
  });

  it("build answers from undici's own body stream and header parser (no silent fallback)", async () => {
    // Without them every answer goes through `request` again, with a body stream per 304: still
    // correct, so only this says that an undici update moved them.
    const { hop } = undiciCore();
    expect(hop).not.toBeNull();
    const entry = createRequire(import.meta.url)('undici') as typeof Undici;
    expect(hop?.parseHeaders).toBe(entry.util.parseHeaders);
    const server = await startTestServer({ '/small': { body: 'small' } });
    try {
      const res = await entry.request(`${server.origin}/small`);
      expect(res.body).toBeInstanceOf(hop?.BodyReadable as NonNullable<typeof hop>['BodyReadable']);
      expect(await res.body.text()).toBe('small');
    } finally {
      await server.close();
    }
  });

  // Which built-in modules a process loaded is per process: looked at in a child, with the built
  // package (`pnpm test` builds it first).
  it('leave node:http2, node:tls and node:crypto unloaded for a plain-http request', async () => {
    const server = await startTestServer({ '/small': { body: 'small' } });
    try {
      const dist = pathToFileURL(fileURLToPath(new URL('../dist/index.js', import.meta.url))).href;
      const child = `
const { createWebClient } = await import(process.argv[1]);
const client = createWebClient({ allowPrivateNetworks: true });
const res = await client.get(process.argv[2] + '/small');
let text = '';
for await (const c of res.body) text += Buffer.from(c).toString();
await client.close();
const loaded = process.moduleLoadList.filter((m) => /^NativeModule (http2|tls|crypto)$/.test(m));
process.stdout.write(JSON.stringify({ status: res.status, text, loaded }) + '\\n');
`;
      const run = await runNode(['--input-type=module', '--eval', child, dist, server.origin], {
        guardMs: 30_000,
      });
      expect(run.stderr).toBe('');
      expect(lastJsonLine(run)).toEqual({ status: 200, text: 'small', loaded: [] });
    } finally {
      await server.close();
    }
  });
});
