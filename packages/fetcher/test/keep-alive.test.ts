import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { lastJsonLine, type NodeRun, runNode, startTestServer, type TestServer } from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// ref()/unref() decide whether the client's sockets and timers keep the process alive, so every
// case runs in a child process whose event loop holds nothing but one client (the server lives
// here), and what is asserted is how the child ends.

/** The built package, as users run it; `pnpm test` (turbo) builds it first. */
const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url));
if (!existsSync(DIST))
  throw new Error(`${DIST} is missing: run \`pnpm --filter @usp-ts/fetcher build\` first`);

/** Only reached when a child hangs. */
const HANG_GUARD_MS = 30_000;
/** Node's exit code when the event loop ran dry under an unsettled top-level await. */
const LET_GO = 13;

const CHILD = `
const [mode, dist, origin, proxy] = process.argv.slice(2);
const { createWebClient } = await import(dist);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
// Long timeouts: only ref()/unref() may decide when this process ends.
const client = createWebClient({
  allowPrivateNetworks: true,
  ...(proxy ? { proxy } : {}),
  requestTimeoutMs: 120_000,
  bodyIdleTimeoutMs: 120_000,
  headersTimeoutMs: 120_000,
  retries: 2,
  baseDelayMs: 20,
  maxDelayMs: 20,
  perHostDelayMs: mode === 'spacing-unref' ? 120_000 : mode === 'spacing-ref' ? 100 : 0,
});
const count = async (body) => {
  let n = 0;
  for await (const c of body) n += c.length;
  return n;
};
if (mode === 'abandon-body') {
  // A body read in part, then forgotten while the server goes on sending it, slowly: its socket
  // keeps reading (a paused body whose socket buffer is full would not hold the process anyway).
  const res = await client.get(origin + '/drip');
  const it = res.body[Symbol.asyncIterator]();
  const first = await it.next();
  client.unref();
  out({ status: res.status, first: first.value.length });
} else if (mode === 'pending-unref') {
  client.unref();
  const res = await client.get(origin + '/never');
  out({ kind: res.kind });
} else if (mode === 'ref-again') {
  client.unref();
  client.ref();
  const res = await client.get(origin + '/trickle');
  out({ kind: res.kind, bytes: await count(res.body) });
} else if (mode === 'ref-restores') {
  // A kept-alive socket, taken for a request while the client is unref()d: undici's ref() of it
  // is held back, and must be applied when the client is ref()d again.
  const first = await client.get(origin + '/small');
  await count(first.body);
  client.unref();
  const pending = client.get(origin + '/trickle');
  await new Promise((r) => setImmediate(r));
  client.ref();
  const res = await pending;
  out({ kind: res.kind, bytes: await count(res.body) });
} else if (mode === 'backoff') {
  // Nothing but the backoff timer holds the process between the two attempts.
  const res = await client.get(origin + '/unavailable');
  out({ kind: res.kind, status: res.status, attempts: res.attempts });
} else if (mode === 'spacing-ref' || mode === 'spacing-unref') {
  // The second request to the host waits for its slot on a timer.
  const first = await client.get(origin + '/small');
  await count(first.body);
  if (mode === 'spacing-unref') client.unref();
  const res = await client.get(origin + '/small');
  out({ kind: res.kind, bytes: await count(res.body) });
} else if (mode === 'idle-default') {
  // No close(): as with plain undici, an idle keep-alive socket does not hold the process.
  const res = await client.get(origin + '/small');
  out({ kind: res.kind, bytes: await count(res.body) });
}
`;

let dir = '';
let script = '';
let server: TestServer;
/** An HTTP CONNECT proxy to the loopback test server. */
let proxyServer: Server;
let proxyUrl = '';
const proxySockets = new Set<Socket>();
/** Responses held open by `/never`, ended when the tests are done. */
const held: ServerResponse[] = [];

async function runChild(
  mode: string,
  proxy = '',
): Promise<NodeRun & { out: Record<string, unknown> | null }> {
  const r = await runNode([script, mode, pathToFileURL(DIST).href, server.origin, proxy], {
    guardMs: HANG_GUARD_MS,
  });
  return { ...r, out: lastJsonLine(r) };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fetcher-keep-alive-'));
  script = join(dir, 'child.mjs');
  writeFileSync(script, CHILD);
  server = await startTestServer({
    '/small': { body: 'small' },
    '/unavailable': { status: 503, body: 'later' },
    '/drip': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('start');
      const t = setInterval(() => res.write('more'), 5);
      res.on('close', () => clearInterval(t));
    },
    '/never': (_req, res) => {
      held.push(res);
    },
    '/trickle': async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      for (let i = 0; i < 20; i++) {
        res.write('0123456789');
        await new Promise((r) => setImmediate(r));
      }
      res.end();
    },
  });
  proxyServer = createServer();
  proxyServer.on('connect', (req: IncomingMessage, downstream: Socket, head: Buffer) => {
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host, () => {
      downstream.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(downstream);
      downstream.pipe(upstream);
    });
    for (const s of [upstream, downstream]) {
      proxySockets.add(s);
      s.on('close', () => proxySockets.delete(s));
    }
    upstream.on('error', () => downstream.destroy());
    downstream.on('error', () => upstream.destroy());
  });
  proxyServer.listen(0, '127.0.0.1');
  await once(proxyServer, 'listening');
  proxyUrl = `http://127.0.0.1:${(proxyServer.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of held) res.destroy();
  for (const s of proxySockets) s.destroy();
  if (proxyServer) await new Promise((r) => proxyServer.close(r));
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('FetcherWebClient ref()/unref()', () => {
  it('unref(): a body left half-read, still arriving, does not keep the process alive', async () => {
    const r = await runChild('abandon-body');
    expect(r.stderr).toBe('');
    expect(r.hung).toBe(false);
    expect(r.code).toBe(0);
    expect(r.out).toMatchObject({ status: 200 });
  });

  it('unref(): a request waiting for its response does not keep the process alive', async () => {
    const r = await runChild('pending-unref');
    expect(r.hung).toBe(false);
    expect(r.code).toBe(LET_GO);
    expect(r.out).toBeNull();
  });

  it('ref() after unref(): an awaited response and body arrive with nothing else alive', async () => {
    const r = await runChild('ref-again');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toEqual({ kind: 'ok', bytes: 200 });
  });

  it('ref() with a request in flight: its response and body arrive with nothing else alive', async () => {
    const r = await runChild('ref-restores');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toEqual({ kind: 'ok', bytes: 200 });
  });

  it('by default a retry backoff timer keeps the process alive until the retry', async () => {
    const r = await runChild('backoff');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toEqual({ kind: 'error', status: 503, attempts: 2 });
  });

  it('by default a request waiting for its per-host slot keeps the process alive', async () => {
    const r = await runChild('spacing-ref');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toEqual({ kind: 'ok', bytes: 5 });
  });

  it('unref(): a request waiting for its per-host slot (a timer) does not keep the process alive', async () => {
    const r = await runChild('spacing-unref');
    expect(r.hung).toBe(false);
    expect(r.code).toBe(LET_GO);
    expect(r.out).toBeNull();
  });

  describe('through a proxy', () => {
    it('unref(): a tunnelled body left half-read, still arriving, does not keep the process alive', async () => {
      const r = await runChild('abandon-body', proxyUrl);
      expect(r.stderr).toBe('');
      expect(r.hung).toBe(false);
      expect(r.code).toBe(0);
      expect(r.out).toMatchObject({ status: 200 });
    });

    it('unref(): a tunnelled request waiting for its response does not keep the process alive', async () => {
      const r = await runChild('pending-unref', proxyUrl);
      expect(r.hung).toBe(false);
      expect(r.code).toBe(LET_GO);
      expect(r.out).toBeNull();
    });

    it('ref() again: a tunnelled response arrives with nothing else alive', async () => {
      const r = await runChild('ref-again', proxyUrl);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.out).toEqual({ kind: 'ok', bytes: 200 });
    });

    it('default: an idle tunnelled keep-alive socket does not hold the process', async () => {
      const r = await runChild('idle-default', proxyUrl);
      expect(r.stderr).toBe('');
      expect(r.hung).toBe(false);
      expect(r.code).toBe(0);
      expect(r.out).toEqual({ kind: 'ok', bytes: 5 });
    });
  });

  it('default: an idle keep-alive socket does not hold the process, without close()', async () => {
    const r = await runChild('idle-default');
    expect(r.stderr).toBe('');
    expect(r.hung).toBe(false);
    expect(r.code).toBe(0);
    expect(r.out).toEqual({ kind: 'ok', bytes: 5 });
  });
});
