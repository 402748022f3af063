import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { OpenedResources } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
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
});
