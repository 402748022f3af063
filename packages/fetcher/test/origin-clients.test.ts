import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { OpenedResources } from '@usp-ts/test-server';
import type { Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { hopRequest } from '../src/hop-request.js';
import type { Timers } from '../src/keep-alive.js';
import { OriginClients } from '../src/origin-clients.js';
import { StopSignal } from '../src/stop-signal.js';
import { undiciCore } from '../src/undici.js';
import { holdingServer } from './holding-server.js';

const opened = new OpenedResources();
afterEach(() => opened.closeAll());

/** Timers that fire only when the test says so: the grace passes at a point the test chooses. */
class HeldTimers implements Timers {
  readonly pending = new Map<number, () => void>();
  #next = 0;

  setTimeout(fn: () => void): unknown {
    const id = ++this.#next;
    this.pending.set(id, fn);
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  /** Lets the grace of every request waiting now pass. */
  fireAll(): void {
    const fns = [...this.pending.values()];
    this.pending.clear();
    for (const fn of fns) fn();
  }
}

function clients(connections: number, timers: Timers, keepAliveTimeout = 60_000): OriginClients {
  const { Client } = undiciCore();
  const c = new OriginClients({
    make: (origin: string) => new Client(origin, { keepAliveTimeout }),
    connections,
    graceMs: 25,
    timers,
  });
  opened.track({ close: () => c.destroy() });
  return c;
}

/** A GET as the web client sends one: on a free connection now, or after waiting for one. */
async function get(
  c: OriginClients,
  origin: string,
  path: string,
  signal = new StopSignal(),
): Promise<string> {
  const d: Dispatcher | null = c.now(origin) ?? (await c.wait(origin, signal));
  if (d === null) return 'stopped';
  const { hop } = undiciCore();
  if (hop === null) throw new Error("undici's files moved: hopRequest is not in use");
  const res = await hopRequest(d, hop, {
    origin,
    path,
    headers: {},
    signal,
    drainLimitBytes: 64 * 1024,
    drainTimeoutMs: 10_000,
    ends: c,
  });
  let text = '';
  for await (const chunk of res.body ?? []) text += String(chunk);
  return text;
}

describe('OriginClients', () => {
  it('serves concurrent quick requests on one connection: each waits for it, no grace passes', async () => {
    const f = await holdingServer(opened);
    const timers = new HeldTimers();
    const c = clients(6, timers);
    const all = await Promise.all(Array.from({ length: 10 }, () => get(c, f.origin, '/x')));
    expect(all).toEqual(Array(10).fill('x'));
    // Nine waited (a grace timer each, never fired) and were served as the one connection freed.
    expect(f.sockets.size).toBe(1);
    expect(timers.pending.size).toBe(0);
  });

  it('opens a second connection only once a request has waited the grace for a busy one', async () => {
    const f = await holdingServer(opened);
    const timers = new HeldTimers();
    const c = clients(2, timers);
    const slow = get(c, f.origin, '/hold');
    await f.holding(1);
    const quick = get(c, f.origin, '/x');
    // The second request waits: no connection of its own yet.
    await new Promise((r) => setImmediate(r));
    expect(timers.pending.size).toBe(1);
    expect(f.sockets.size).toBe(1);
    timers.fireAll();
    expect(await quick).toBe('x');
    expect(f.sockets.size).toBe(2);
    f.releaseAll();
    expect(await slow).toBe('held');
  });

  it('keeps to the limit: past it a request waits on the least busy connection, none is lost', async () => {
    const f = await holdingServer(opened);
    const timers = new HeldTimers();
    const c = clients(2, timers);
    const first = get(c, f.origin, '/hold');
    await f.holding(1);
    const second = get(c, f.origin, '/hold');
    await new Promise((r) => setImmediate(r));
    timers.fireAll();
    await f.holding(2);
    const rest = [get(c, f.origin, '/x'), get(c, f.origin, '/hold'), get(c, f.origin, '/x')];
    await new Promise((r) => setImmediate(r));
    expect(timers.pending.size).toBe(3);
    timers.fireAll();
    // Queued on the two busy connections: nothing more reaches the server until they are free.
    await new Promise((r) => setImmediate(r));
    expect(f.sockets.size).toBe(2);
    const answers = Promise.all([first, second, ...rest]);
    // Each release lets the next queued request through; the held one among them is released too.
    f.releaseAll();
    await f.holding(3);
    f.releaseAll();
    expect(await answers).toEqual(['held', 'held', 'x', 'held', 'x']);
    expect(f.sockets.size).toBe(2);
    expect(f.maxInFlight()).toBe(2);
  });

  it('a request stopped while it waits gives up at once and leaves nothing behind', async () => {
    const f = await holdingServer(opened);
    const timers = new HeldTimers();
    const c = clients(2, timers);
    const slow = get(c, f.origin, '/hold');
    await f.holding(1);
    const signal = new StopSignal();
    const waiting = get(c, f.origin, '/x', signal);
    await new Promise((r) => setImmediate(r));
    signal.abort(new Error('stop'));
    expect(await waiting).toBe('stopped');
    expect(timers.pending.size).toBe(0);
    expect(f.sockets.size).toBe(1);
    f.releaseAll();
    expect(await slow).toBe('held');
    // The connection is free again: a later request takes it at once.
    expect(await get(c, f.origin, '/x')).toBe('x');
    expect(f.sockets.size).toBe(1);
  });

  it('ends the waits when destroyed', async () => {
    const f = await holdingServer(opened);
    const timers = new HeldTimers();
    const c = clients(2, timers);
    const slow = get(c, f.origin, '/hold').catch((e: Error) => e.name);
    await f.holding(1);
    const waiting = get(c, f.origin, '/x');
    await new Promise((r) => setImmediate(r));
    await c.destroy();
    expect(await waiting).toBe('stopped');
    expect(await slow).toBe('ClientDestroyedError');
    expect(timers.pending.size).toBe(0);
  });

  it('forgets an origin once its connections are closed, and serves it again afterwards', async () => {
    const sockets: Socket[] = [];
    const s = await opened.server({
      '/x': (req: IncomingMessage, res: ServerResponse) => {
        sockets.push(req.socket);
        res.end('x');
      },
    });
    const c = clients(2, new HeldTimers());
    const d = c.now(s.origin);
    expect(await get(c, s.origin, '/x')).toBe('x');
    expect(c.origins).toBe(1);
    // The server closes the idle connection: the client hears of it and lets the origin go.
    const closed = once(d as Dispatcher, 'disconnect');
    sockets[0]?.destroy();
    await closed;
    expect(c.origins).toBe(0);
    expect(await get(c, s.origin, '/x')).toBe('x');
    expect(c.origins).toBe(1);
  });

  it('forgets an origin whose connection was refused', async () => {
    const s = await opened.server();
    const origin = s.origin;
    await opened.closeServer(s);
    const c = clients(2, new HeldTimers());
    await expect(get(c, origin, '/x')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(c.origins).toBe(0);
  });
});
