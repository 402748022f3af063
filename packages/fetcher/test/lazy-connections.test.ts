import { OpenedResources } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { loopbackClient, text } from './helpers.js';
import { holdingServer } from './holding-server.js';

// A host's further connections open only for a request that waited for a busy one (see
// `OriginClients`, whose own tests hold the grace at will): here the client as a whole, with its
// real grace, against a server that holds answers until the test releases them.
const opened = new OpenedResources();
afterEach(() => opened.closeAll());

describe('connections per host', () => {
  it('a request waiting behind a held answer gets a connection of its own after the grace', async () => {
    const s = await holdingServer(opened);
    const client = opened.track(loopbackClient({ maxConnectionsPerHost: 2 }));
    const slow = client.get(`${s.origin}/hold`);
    await s.holding(1);
    // Answered while the first is still held: nothing waits for the held one.
    expect(await text(await client.get(`${s.origin}/x`))).toBe('x');
    expect(s.sockets.size).toBe(2);
    s.releaseAll();
    expect(await text(await slow)).toBe('held');
  });

  it('keeps maxConnectionsPerHost a limit, loses no request and hangs on none', async () => {
    const s = await holdingServer(opened);
    const client = opened.track(loopbackClient({ maxConnectionsPerHost: 2 }));
    // Each body read as it comes: a request keeps its slot until its body is read.
    const all = Array.from({ length: 5 }, async (_, i) =>
      text(await client.get(`${s.origin}/${i % 2 === 0 ? 'hold' : 'x'}`)),
    );
    await s.holding(2);
    s.releaseAll();
    await s.holding(3);
    s.releaseAll();
    expect(await Promise.all(all)).toEqual(['held', 'x', 'held', 'x', 'held']);
    expect(s.sockets.size).toBeLessThanOrEqual(2);
    expect(s.maxInFlight()).toBeLessThanOrEqual(2);
  });

  it('sends one request after another on one connection', async () => {
    const s = await holdingServer(opened);
    const client = opened.track(loopbackClient({ maxConnectionsPerHost: 6 }));
    for (let i = 0; i < 5; i++) expect(await text(await client.get(`${s.origin}/x`))).toBe('x');
    expect(s.sockets.size).toBe(1);
  });
});
