import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { OpenedResources } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { hopRequest } from '../src/hop-request.js';
import { StopSignal } from '../src/stop-signal.js';
import { undiciCore } from '../src/undici.js';
import { loopbackClient, text } from './helpers.js';

// Answers whose body nobody reads (304, 404, a redirect): drained when small, the connection
// kept; dropped when large. They no longer get a body stream (`hopRequest`), so this pins what
// undici's `body.dump({ limit })` did for them.
const opened = new OpenedResources();
afterEach(() => opened.closeAll());

async function farm() {
  const sockets = new Set<Socket>();
  const s = await opened.server({
    '/small-404': (req: IncomingMessage, res: ServerResponse) => {
      sockets.add(req.socket);
      res.statusCode = 404;
      res.end('x'.repeat(10_000));
    },
    '/large-404': (req: IncomingMessage, res: ServerResponse) => {
      sockets.add(req.socket);
      res.statusCode = 404;
      res.end('x'.repeat(200_000));
    },
    '/304': (req: IncomingMessage, res: ServerResponse) => {
      sockets.add(req.socket);
      res.statusCode = 304;
      res.setHeader('etag', '"a"');
      res.end();
    },
    '/moved': (req: IncomingMessage, res: ServerResponse) => {
      sockets.add(req.socket);
      res.statusCode = 301;
      res.setHeader('location', '/ok');
      res.end('moved '.repeat(1_000));
    },
    '/ok': (req: IncomingMessage, res: ServerResponse) => {
      sockets.add(req.socket);
      res.end('ok');
    },
  });
  return { s, sockets };
}

describe('bodies nobody reads', () => {
  it('a small 404 body is drained and its connection serves the next request', async () => {
    const { s, sockets } = await farm();
    const c = opened.track(loopbackClient({ keepAliveTimeoutMs: 60_000 }));
    const r = await c.get(`${s.origin}/small-404`);
    expect(r).toMatchObject({ kind: 'error', status: 404 });
    expect(await text(await c.get(`${s.origin}/ok`))).toBe('ok');
    expect(sockets.size).toBe(1);
  });

  it('a 304 and a redirect body keep their connection; the headers are read', async () => {
    const { s, sockets } = await farm();
    const c = opened.track(loopbackClient({ keepAliveTimeoutMs: 60_000 }));
    const nm = await c.get(`${s.origin}/304`, { ifNoneMatch: '"a"' });
    expect(nm.kind).toBe('not-modified');
    expect(nm.kind === 'not-modified' && nm.headers('etag')).toBe('"a"');
    const moved = await c.get(`${s.origin}/moved`);
    expect(await text(moved)).toBe('ok');
    expect(moved.url).toBe(`${s.origin}/ok`);
    expect(sockets.size).toBe(1);
  });

  it('a 404 body over 64 KiB is not read: its connection is dropped, the next request opens another', async () => {
    const { s, sockets } = await farm();
    const c = opened.track(loopbackClient({ keepAliveTimeoutMs: 60_000 }));
    const r = await c.get(`${s.origin}/large-404`);
    expect(r).toMatchObject({ kind: 'error', status: 404 });
    expect(await text(await c.get(`${s.origin}/ok`))).toBe('ok');
    expect(sockets.size).toBe(2);
  });

  it('a 404 body still coming after its head is timed: dropped when it stalls, kept when it ends', async () => {
    // The drain timer is set after the read that brought the head, only when the body did not end
    // in it: both sides of that choice, through hopRequest with a short drain time.
    const sockets = new Set<Socket>();
    const s = await opened.server({
      '/stall': (req: IncomingMessage, res: ServerResponse) => {
        sockets.add(req.socket);
        res.writeHead(404, { 'content-length': '100' });
        res.write('x');
      },
      '/late': (req: IncomingMessage, res: ServerResponse) => {
        sockets.add(req.socket);
        res.writeHead(404, { 'content-length': '2' });
        res.write('x', () => setImmediate(() => res.end('y')));
      },
    });
    const { Client, hop } = undiciCore();
    if (hop === null) throw new Error("undici's files moved: hopRequest is not in use");
    const client = new Client(s.origin, { keepAliveTimeout: 60_000 });
    opened.track({ close: () => client.destroy() });
    const get = (path: string) =>
      hopRequest(client, hop, {
        origin: s.origin,
        path,
        headers: {},
        signal: new StopSignal(),
        drainLimitBytes: 64 * 1024,
        drainTimeoutMs: 200,
        ends: null,
      });
    expect(await get('/late')).toMatchObject({ statusCode: 404, body: null });
    expect(await get('/late')).toMatchObject({ statusCode: 404, body: null });
    expect(sockets.size).toBe(1);
    const [socket] = sockets;
    const closed = once(socket as Socket, 'close');
    expect(await get('/stall')).toMatchObject({ statusCode: 404, body: null });
    await closed;
    expect(sockets.size).toBe(1);
  });
});
