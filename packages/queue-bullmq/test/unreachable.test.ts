import { createServer } from 'node:net';
import { UspError } from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { assertRedisReachable, enqueueSites, RedisUnreachableError } from '../src/index.js';

/** A server that accepts connections and never answers; its port. */
async function silentServer(): Promise<{ port: number; close: () => void }> {
  const server = createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { port, close: () => server.close() };
}

/** A port nothing listens on: bound once, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('a Redis that is not there', () => {
  it('enqueueSites rejects with RedisUnreachableError (no retrying for ever), the password left out', async () => {
    const port = await closedPort();
    const err = await enqueueSites(['http://a.example/'], {
      connection: `redis://user:secret@127.0.0.1:${port}/0`,
      wait: true,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedisUnreachableError);
    expect(err).toBeInstanceOf(UspError);
    expect((err as RedisUnreachableError).code).toBe('USP_CONNECTION');
    expect((err as RedisUnreachableError).url).toBe(`redis://127.0.0.1:${port}/0`);
    expect((err as Error).message).toMatch(
      new RegExp(`^cannot reach Redis at redis://127\\.0\\.0\\.1:${port}/0: .*ECONNREFUSED`),
    );
    expect((err as Error).message).not.toMatch(/secret/);
    expect((err as Error).cause).toBeInstanceOf(Error);
  });

  it('a server that accepts and never answers: rejected once the check gives up', async () => {
    const silent = await silentServer();
    const port = silent.port;
    try {
      const err = await assertRedisReachable(`redis://127.0.0.1:${port}`, { timeoutMs: 200 }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(RedisUnreachableError);
      expect((err as Error).message).toMatch(/no answer within 200 ms/);
    } finally {
      silent.close();
    }
  });

  it('the caller’s signal ends the check with its reason', async () => {
    const silent = await silentServer();
    const port = silent.port;
    try {
      const controller = new AbortController();
      const pending = assertRedisReachable(`redis://127.0.0.1:${port}`, {
        signal: controller.signal,
        timeoutMs: 60_000,
      }).catch((e: unknown) => e);
      controller.abort(new Error('stop'));
      expect(((await pending) as Error).message).toBe('stop');
    } finally {
      silent.close();
    }
  });
});
