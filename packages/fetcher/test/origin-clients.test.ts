import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { OpenedResources } from '@usp-ts/test-server';
import type { Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { OriginClients } from '../src/origin-clients.js';
import { undiciCore } from '../src/undici.js';

const opened = new OpenedResources();
afterEach(() => opened.closeAll());

function clients(connections: number, keepAliveTimeout = 60_000): OriginClients {
  const { Client } = undiciCore();
  const c = new OriginClients((origin) => new Client(origin, { keepAliveTimeout }), connections);
  opened.track({ close: () => c.destroy() });
  return c;
}

async function get(d: Dispatcher, origin: string, path: string): Promise<string> {
  const res = await undiciCore().request.call(d, { origin, path, method: 'GET' });
  return res.body.text();
}

describe('OriginClients', () => {
  it('reuses an idle connection, opens a second one for a request while the first is busy, no more', async () => {
    const sockets = new Set<Socket>();
    let release: (() => void)[] = [];
    const s = await opened.server({
      '/x': (req: IncomingMessage, res: ServerResponse) => {
        sockets.add(req.socket);
        res.end('x');
      },
      '/slow': (req: IncomingMessage, res: ServerResponse) => {
        sockets.add(req.socket);
        release.push(() => res.end('slow'));
      },
    });
    const c = clients(2);
    expect(await get(c.for(s.origin), s.origin, '/x')).toBe('x');
    expect(await get(c.for(s.origin), s.origin, '/x')).toBe('x');
    expect(sockets.size).toBe(1);
    // Each client takes one response at a time; undici frees it a moment after the response.
    await new Promise((r) => setImmediate(r));
    const slow1 = get(c.for(s.origin), s.origin, '/slow');
    const slow2 = get(c.for(s.origin), s.origin, '/slow');
    while (release.length < 2) await new Promise((r) => setTimeout(r, 5));
    expect(sockets.size).toBe(2);
    // A third waits on one of the two connections, and is served after it.
    const third = get(c.for(s.origin), s.origin, '/x');
    for (const f of release) f();
    release = [];
    expect(await Promise.all([slow1, slow2, third])).toEqual(['slow', 'slow', 'x']);
    expect(sockets.size).toBe(2);
  });

  it('forgets an origin once its connections are closed, and serves it again afterwards', async () => {
    const sockets: Socket[] = [];
    const s = await opened.server({
      '/x': (req: IncomingMessage, res: ServerResponse) => {
        sockets.push(req.socket);
        res.end('x');
      },
    });
    const c = clients(2);
    const d = c.for(s.origin);
    expect(await get(d, s.origin, '/x')).toBe('x');
    expect(c.origins).toBe(1);
    // The server closes the idle connection: the client hears of it and lets the origin go.
    const closed = once(d, 'disconnect');
    sockets[0]?.destroy();
    await closed;
    expect(c.origins).toBe(0);
    expect(await get(c.for(s.origin), s.origin, '/x')).toBe('x');
    expect(c.origins).toBe(1);
  });

  it('forgets an origin whose connection was refused', async () => {
    const s = await opened.server();
    const origin = s.origin;
    await opened.closeServer(s);
    const c = clients(2);
    const d = c.for(origin);
    await expect(get(d, origin, '/x')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(c.origins).toBe(0);
  });
});
