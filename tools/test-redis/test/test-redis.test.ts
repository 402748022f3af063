import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisServerMissingError, startTestRedis, type TestRedis } from '../src/index.js';

/** Sends one inline command and resolves with the first reply line (enough for PING/SET/GET). */
function command(port: number, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('utf8');
    socket.on('error', reject);
    socket.on('data', (chunk: string) => {
      data += chunk;
      // A bulk reply is `$len\r\nvalue\r\n`; everything else is one line.
      const lines = data.split('\r\n');
      const done = data.startsWith('$') && data !== '$-1\r\n' ? lines.length >= 3 : lines.length >= 2;
      if (done) {
        socket.end();
        resolve(data.startsWith('$') && data !== '$-1\r\n' ? lines[1] : lines[0]);
      }
    });
    socket.write(`${line}\r\n`);
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startTestRedis', () => {
  let redis: TestRedis | undefined;
  afterEach(async () => {
    await redis?.stop();
    redis = undefined;
  });

  it('starts a server on 127.0.0.1 that answers, and stops it by PID', async () => {
    redis = await startTestRedis();
    expect(redis.url).toBe(`redis://127.0.0.1:${redis.port}`);
    expect(await command(redis.port, 'PING')).toBe('+PONG');
    expect(await command(redis.port, 'CONFIG GET appendonly')).toMatch(/^\*2/);
    const pid = redis.pid;
    expect(alive(pid)).toBe(true);
    await redis.stop();
    expect(alive(pid)).toBe(false);
    await redis.stop();
  });

  it('two servers get two ports', async () => {
    redis = await startTestRedis();
    const other = await startTestRedis();
    try {
      expect(other.port).not.toBe(redis.port);
      await command(redis.port, 'SET k one');
      expect(await command(other.port, 'GET k')).toBe('$-1');
    } finally {
      await other.stop();
    }
  });

  it('a persistent server keeps its data across restart(), under a new PID', async () => {
    redis = await startTestRedis({ persistent: true });
    expect(await command(redis.port, 'SET k kept')).toBe('+OK');
    const before = redis.pid;
    await redis.restart();
    expect(redis.pid).not.toBe(before);
    expect(alive(before)).toBe(false);
    expect(await command(redis.port, 'GET k')).toBe('kept');
  });

  it('a server without persistence starts empty after restart()', async () => {
    redis = await startTestRedis();
    await command(redis.port, 'SET k gone');
    await redis.restart();
    expect(await command(redis.port, 'GET k')).toBe('$-1');
  });

  it('fails with one clear line when the binary is missing', async () => {
    const saved = process.env.USP_REDIS_SERVER;
    process.env.USP_REDIS_SERVER = '/nonexistent/redis-server';
    try {
      const error = await startTestRedis().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(RedisServerMissingError);
      expect((error as Error).message).not.toContain('\n');
      expect((error as Error).message).toContain('apt-get install -y redis-server');
    } finally {
      if (saved === undefined) delete process.env.USP_REDIS_SERVER;
      else process.env.USP_REDIS_SERVER = saved;
    }
  });
});
