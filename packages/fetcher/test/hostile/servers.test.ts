/**
 * Servers that misbehave (issue 6): every request ends within its limits, keeps what it read,
 * and leaves no socket, descriptor or rejection behind.
 */
import { getEventListeners } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { OpenedResources } from '@usp-ts/test-server';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FetchErrorResponse } from '../../src/index.js';
import { drain, expectOk, loopbackClient, openFds, text } from '../helpers.js';

const opened = new OpenedResources();
const server = (routes: Parameters<typeof opened.server>[0] = {}) => opened.server(routes);
const client = (options: Parameters<typeof loopbackClient>[0] = {}) => opened.track(loopbackClient(options));
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

/** Closes the clients, then checks that the servers see no socket left open. */
async function closeAndCheckSockets(): Promise<void> {
  await opened.closeClients();
  for (const s of opened.servers) await vi.waitFor(() => expect(s.openSockets()).toBe(0), { timeout: 2000 });
}

beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
});

afterEach(async () => {
  await closeAndCheckSockets();
  await opened.closeAll();
});

afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

const drip =
  (intervalMs: number, headers: Record<string, string> = {}) =>
  (req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'Content-Type': 'application/xml', ...headers });
    const timer = setInterval(() => res.write('x'), intervalMs);
    req.socket.on('close', () => clearInterval(timer));
  };

describe('a server that breaks off', () => {
  it('connection reset mid-body: iteration throws connection, bytes before kept', async () => {
    const s = await server({
      '/reset': (req, res) => {
        res.writeHead(200, { 'Content-Length': '100000' });
        res.write('a'.repeat(1000), () => {
          // Give the bytes time to be read before the reset discards the receive queue.
          setTimeout(() => req.socket.resetAndDestroy(), 50);
        });
      },
    });
    const d = await drain(expectOk(await client().get(`${s.origin}/reset`)).body);
    expect(d.bytes.toString()).toBe('a'.repeat(1000));
    expect(d.error).toMatchObject({ name: 'WebBodyError', code: 'USP_CONNECTION', bytesDelivered: 1000 });
  });

  it('a Content-Length longer than the body: the short body, then connection', async () => {
    const s = await server({
      '/short': (req) => {
        req.socket.end(`HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n${'b'.repeat(40)}`);
      },
    });
    const d = await drain(expectOk(await client().get(`${s.origin}/short`)).body);
    expect(d.bytes.toString()).toBe('b'.repeat(40));
    expect(d.error?.code).toBe('USP_CONNECTION');
  });

  it('a Content-Length shorter than the body: exactly Content-Length bytes, and the next request is fine', async () => {
    const s = await server({
      '/long': (req) => {
        req.socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n${'c'.repeat(60)}`);
      },
      '/next': { body: 'next' },
    });
    const c = client();
    expect(await text(await c.get(`${s.origin}/long`))).toBe('c'.repeat(10));
    expect(await text(await c.get(`${s.origin}/next`))).toBe('next');
  });

  it('a gzip stream cut in the middle: what decodes is delivered, then decoding', async () => {
    const plain = 'd'.repeat(300_000);
    const gz = gzipSync(plain);
    const s = await server({
      '/cut.xml': (_req, res) => {
        res.writeHead(200, { 'Content-Encoding': 'gzip' });
        res.end(gz.subarray(0, Math.floor(gz.length / 2)));
      },
    });
    const d = await drain(expectOk(await client().get(`${s.origin}/cut.xml`)).body);
    expect(d.error?.code).toBe('USP_DECODING');
    expect(d.bytes.length).toBeGreaterThan(0);
    expect(plain.startsWith(d.bytes.toString())).toBe(true);
  });
});

describe('a server that stalls', () => {
  it('accepts and never answers: headers timeout, retryable, retried', async () => {
    let seen = 0;
    const s = await server({
      '/hang': () => {
        seen++;
      },
    });
    const res = (await client({ headersTimeoutMs: 150, retries: 2 }).get(
      `${s.origin}/hang`,
    )) as FetchErrorResponse;
    expect(res).toMatchObject({ kind: 'error', code: 'timeout', retryable: true, attempts: 2, status: null });
    expect(seen).toBe(2);
  });

  it('drips a byte every 100 ms: cut off by requestTimeoutMs although no read is idle', async () => {
    const s = await server({ '/drip': drip(100) });
    const c = client({ requestTimeoutMs: 500, bodyIdleTimeoutMs: 10_000 });
    const d = await drain(expectOk(await c.get(`${s.origin}/drip`)).body);
    expect(d.error).toMatchObject({ code: 'USP_TIMEOUT' });
    expect(d.error?.message).toContain('requestTimeoutMs');
    expect(d.bytes.length).toBeGreaterThan(0);
    expect(d.bytes.length).toBeLessThan(10);
  });

  it('drips a byte every 100 ms under a budget long enough for the shared clock: cut off on time', async () => {
    // Over 500 ms a request's budget waits on the client's shared clock, which hands it a timer of
    // its own near its end: the cut comes when the 1,200 ms of waiting are spent, not a tick late.
    const s = await server({ '/drip': drip(100) });
    const c = client({ requestTimeoutMs: 1_200, bodyIdleTimeoutMs: 10_000 });
    const started = performance.now();
    const d = await drain(expectOk(await c.get(`${s.origin}/drip`)).body);
    expect(d.error).toMatchObject({ code: 'USP_TIMEOUT' });
    expect(d.error?.message).toContain('requestTimeoutMs (1200 ms)');
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_200);
    expect(d.bytes.length).toBeGreaterThan(5);
    expect(d.bytes.length).toBeLessThan(20);
  });

  it('accepts and never answers, budget on the shared clock: timeout, retryable', async () => {
    const s = await server({ '/hang': () => {} });
    const started = performance.now();
    const res = await client({ requestTimeoutMs: 700, headersTimeoutMs: 60_000, retries: 1 }).get(
      `${s.origin}/hang`,
    );
    expect(res).toMatchObject({ kind: 'error', code: 'timeout', retryable: true, status: null });
    expect(performance.now() - started).toBeGreaterThanOrEqual(700);
  });

  it('drips the headers: timeout before the response', async () => {
    const s = await server({
      '/slow-headers': (req) => {
        const parts = 'HTTP/1.1 200 OK\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n'.split('');
        const timer = setInterval(() => {
          const p = parts.shift();
          if (p !== undefined) req.socket.write(p);
        }, 20);
        req.socket.on('close', () => clearInterval(timer));
      },
    });
    const c = client({ requestTimeoutMs: 300, headersTimeoutMs: 10_000, retries: 1 });
    const res = (await c.get(`${s.origin}/slow-headers`)) as FetchErrorResponse;
    expect(res).toMatchObject({ kind: 'error', code: 'timeout', retryable: true });
  });

  it('does not charge the deadline for time the reader spends not reading', async () => {
    const s = await server({
      '/two': async (_req, res) => {
        res.writeHead(200);
        res.write('one ');
        await new Promise((r) => setTimeout(r, 20));
        res.end('two');
      },
    });
    const c = client({ requestTimeoutMs: 200 });
    const it = expectOk(await c.get(`${s.origin}/two`)).body[Symbol.asyncIterator]();
    const chunks: string[] = [];
    const first = await it.next();
    chunks.push(Buffer.from(first.value as Uint8Array).toString());
    // A consumer busy elsewhere for longer than the whole budget.
    await new Promise((r) => setTimeout(r, 400));
    for (let r = await it.next(); !r.done; r = await it.next()) chunks.push(Buffer.from(r.value).toString());
    expect(chunks.join('')).toBe('one two');
  });

  it('a silent body: bodyIdleTimeoutMs', async () => {
    const s = await server({
      '/silent': (_req, res) => {
        res.writeHead(200);
        res.write('start');
      },
    });
    const d = await drain(expectOk(await client({ bodyIdleTimeoutMs: 150 }).get(`${s.origin}/silent`)).body);
    expect(d.bytes.toString()).toBe('start');
    expect(d.error?.code).toBe('USP_TIMEOUT');
  });

  it('many requests to hanging servers all end within their limits', async () => {
    const s = await server({ '/hang': () => {} });
    const c = client({ requestTimeoutMs: 200, retries: 1, maxConnectionsPerHost: 20 });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => c.get(`${s.origin}/hang?${i}`)));
    expect(results.every((r) => r.kind === 'error' && r.code === 'timeout')).toBe(true);
  });
});

describe('bodies over the caps', () => {
  it('stops reading at maxBodyBytes: exactly the cap delivered, too-large, request aborted', async () => {
    let written = 0;
    let closed = false;
    const s = await server({
      '/huge': (req, res) => {
        res.writeHead(200);
        const chunk = Buffer.alloc(64 * 1024, 'z');
        const pump = () => {
          while (!closed && written < 512 * 1024 * 1024) {
            written += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
        };
        req.socket.on('close', () => {
          closed = true;
        });
        pump();
      },
    });
    const cap = 1024 * 1024;
    const d = await drain(expectOk(await client({ maxBodyBytes: cap }).get(`${s.origin}/huge`)).body);
    expect(d.error).toMatchObject({ code: 'USP_TOO_LARGE', bytesDelivered: cap });
    expect(d.error?.message).toContain('maxBodyBytes');
    expect(d.bytes.length).toBe(cap);
    await vi.waitFor(() => expect(closed).toBe(true));
    // The server could only push what socket buffers hold beyond the cap, not the 512 MiB it wanted to.
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });

  it('a gzip bomb stops at maxDecodedBytes', async () => {
    // Gzip members concatenate: 64 copies of 1 MiB of zeros, about 64 KB on the wire.
    const member = gzipSync(Buffer.alloc(1024 * 1024));
    const bomb = Buffer.concat(Array(64).fill(member));
    expect(bomb.length).toBeLessThan(100 * 1024);
    const s = await server({ '/bomb.xml': { headers: { 'Content-Encoding': 'gzip' }, body: bomb } });
    const cap = 2 * 1024 * 1024;
    const d = await drain(expectOk(await client({ maxDecodedBytes: cap }).get(`${s.origin}/bomb.xml`)).body);
    expect(d.error).toMatchObject({ code: 'USP_TOO_LARGE' });
    expect(d.error?.message).toContain('maxDecodedBytes');
    expect(d.bytes.length).toBe(cap);
  });

  it('the raw cap holds under Content-Encoding too, keeping what decoded', async () => {
    const plain = Buffer.from(Array.from({ length: 50_000 }, (_, i) => `<url>${i}</url>`).join(''));
    const gz = gzipSync(plain);
    const s = await server({ '/big.xml': { headers: { 'Content-Encoding': 'gzip' }, body: gz } });
    const cap = Math.floor(gz.length / 3);
    const d = await drain(expectOk(await client({ maxBodyBytes: cap }).get(`${s.origin}/big.xml`)).body);
    expect(d.error).toMatchObject({ code: 'USP_TOO_LARGE' });
    expect(d.error?.message).toContain('maxBodyBytes');
    expect(d.bytes.length).toBeGreaterThan(0);
    expect(plain.subarray(0, d.bytes.length).equals(d.bytes)).toBe(true);
  });
});

describe('servers that say no', () => {
  it('429 with a huge Retry-After: no retry, no wait', async () => {
    const s = await server({ '/rl': { status: 429, headers: { 'Retry-After': '86400' } } });
    const res = (await client({ baseDelayMs: 60_000 }).get(`${s.origin}/rl`)) as FetchErrorResponse;
    expect(res).toMatchObject({
      kind: 'error',
      status: 429,
      message: '429 Too Many Requests',
      retryable: true,
      attempts: 1,
      retryAfterMs: 86_400_000,
    });
    expect(s.requests).toHaveLength(1);
  });

  it('a 5xx storm: every request gives up after its attempts, nothing left open', async () => {
    let count = 0;
    const s = await server({
      '/storm': (_req, res) => {
        count++;
        res.writeHead([500, 502, 503, 504][count % 4]);
        res.end('<h1>down</h1>');
      },
    });
    const c = client({ retries: 3 });
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => c.get(`${s.origin}/storm?${i}`)));
    expect(results.every((r) => r.kind === 'error' && r.code === 'http-status' && r.retryable)).toBe(true);
    expect(count).toBe(90);
  });

  it('redirect loops and chains over the limit end as redirect-limit', async () => {
    const s = await server({ '/self': { status: 301, headers: { Location: '/self' } } });
    for (let i = 0; i < 50; i++) s.route(`/hop${i}`, { status: 302, headers: { Location: `/hop${i + 1}` } });
    const c = client();
    expect(await c.get(`${s.origin}/self`)).toMatchObject({ code: 'redirect-limit', retryable: false });
    const chain = (await c.get(`${s.origin}/hop0`)) as FetchErrorResponse;
    expect(chain).toMatchObject({ code: 'redirect-limit', attempts: 1 });
    expect(s.requests.filter((r) => r.startsWith('GET /hop'))).toHaveLength(11);
  });
});

describe('resources', () => {
  it('leaves no abort listener behind on a signal shared by many requests', async () => {
    const s = await server({ '/ok': { body: 'ok' }, '/e': { status: 500 }, '/hang': () => {} });
    const c = client({ retries: 2, requestTimeoutMs: 100 });
    const ctl = new AbortController();
    for (let i = 0; i < 12; i++) {
      for (const p of i % 4 === 0 ? ['/ok', '/e', '/missing', '/hang'] : ['/ok', '/e', '/missing']) {
        const r = await c.get(`${s.origin}${p}`, { signal: ctl.signal });
        if (r.kind === 'ok') await drain(r.body);
      }
    }
    const cancelled = await c.get(`${s.origin}/ok`, { signal: ctl.signal });
    if (cancelled.kind === 'ok') cancelled.cancel();
    expect(getEventListeners(ctl.signal, 'abort')).toHaveLength(0);
  });

  it('leaves no file descriptor open after a run of faults', async () => {
    const before = openFds();
    if (before === null) return;
    const s = await server({
      '/ok': { body: 'ok' },
      '/hang': () => {},
      '/reset': (req) => {
        req.socket.destroy();
      },
      '/drip': drip(20),
      '/big': { body: Buffer.alloc(300 * 1024) },
      '/e': { status: 503 },
    });
    const c = loopbackClient({ requestTimeoutMs: 150, retries: 2, maxBodyBytes: 100 * 1024 });
    const paths = ['/ok', '/hang', '/reset', '/drip', '/big', '/e', '/missing'];
    const results = await Promise.all(paths.map((p) => c.get(`${s.origin}${p}`)));
    for (const r of results) if (r.kind === 'ok') await drain(r.body);
    // A body never read and never cancelled: close() must still release it.
    const abandoned = await c.get(`${s.origin}/drip`);
    expect(abandoned.kind).toBe('ok');
    await c.close();
    await vi.waitFor(() => expect(s.openSockets()).toBe(0), { timeout: 2000 });
    await opened.closeServer(s);
    await vi.waitFor(() => expect(openFds()).toBeLessThanOrEqual(before), { timeout: 2000 });
  });
});
