import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestRedisOptions {
  /**
   * Keep the data across `restart()`: an append-only file in the server's temp dir, synced on
   * every write. Default `false`: `--save '' --appendonly no`, nothing ever touches the disk.
   */
  persistent?: boolean;
  /** Require this password (`--requirepass`); `url` then carries none, as a client given it by environment would. */
  password?: string;
}

export interface TestRedis {
  /** `redis://127.0.0.1:PORT` */
  readonly url: string;
  readonly port: number;
  /** The PID of the running server (changes on `restart()`). */
  readonly pid: number;
  /** Stops the server (SIGTERM, by PID) and starts it again on the same port and directory. */
  restart(): Promise<void>;
  /** Stops the server by PID and deletes its directory. Safe to call twice. */
  stop(): Promise<void>;
}

/** Thrown when no `redis-server` binary can be run: the distributed tests need one. */
export class RedisServerMissingError extends Error {
  readonly code = 'ERR_REDIS_SERVER_MISSING';
  constructor(binary: string, cause: unknown) {
    super(
      `${binary} not found: the distributed tests need a redis-server binary on PATH ` +
        `(Debian/Ubuntu: apt-get install -y redis-server; .ci/run installs it), or USP_REDIS_SERVER=/path/to/redis-server`,
      { cause },
    );
    this.name = 'RedisServerMissingError';
  }
}

/** The binary to run: `USP_REDIS_SERVER` when set, else `redis-server` from PATH. */
function redisBinary(): string {
  return process.env.USP_REDIS_SERVER || 'redis-server';
}

/** A port nobody listens on right now (the OS picks it; a race with another process is retried). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return address.port;
}

const READY = /Ready to accept connections/;
const BIND_FAILED = /Address already in use|Could not create server TCP listening socket/;

/**
 * Spawns one redis-server and resolves once it logs that it accepts connections (no polling, no
 * sleep). Rejects with `BIND_FAILED` in the message when the port was taken meanwhile.
 */
function spawnServer(args: readonly string[]): Promise<ChildProcess> {
  const binary = redisBinary();
  return new Promise((resolve, reject) => {
    const child = spawn(binary, [...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    let settled = false;
    const onData = (chunk: string) => {
      log += chunk;
      if (!settled && READY.test(log)) {
        settled = true;
        // Keep draining so a chatty server never blocks on a full pipe.
        resolve(child);
      }
    };
    child.stdout?.setEncoding('utf8').on('data', onData);
    child.stderr?.setEncoding('utf8').on('data', onData);
    child.once('error', (error: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      reject(error.code === 'ENOENT' ? new RedisServerMissingError(binary, error) : error);
    });
    child.once('exit', (code, signal) => {
      if (settled) return;
      settled = true;
      reject(
        new Error(`redis-server exited before it was ready (${code ?? signal}): ${log.trim().slice(-400)}`),
      );
    });
  });
}

function waitForExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Sends SIGTERM by PID and waits for the exit; SIGKILL if the server has not gone after 10 s. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = waitForExit(child);
  process.kill(child.pid, 'SIGTERM');
  const guard = setTimeout(() => {
    if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
  }, 10_000);
  await exited;
  clearTimeout(guard);
}

/**
 * Starts a private redis-server on 127.0.0.1 on a free port with its own temp directory. A test
 * must `stop()` it; the server is also killed if the test process exits first.
 */
export async function startTestRedis(options: TestRedisOptions = {}): Promise<TestRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'usp-redis-'));
  const persistence = options.persistent
    ? ['--appendonly', 'yes', '--appendfsync', 'always']
    : ['--appendonly', 'no'];
  const argsFor = (port: number) => [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    ...persistence,
    '--daemonize',
    'no',
    '--loglevel',
    'notice',
    ...(options.password !== undefined ? ['--requirepass', options.password] : []),
  ];

  let child: ChildProcess | undefined;
  let port = 0;
  for (let attempt = 0; child === undefined; attempt++) {
    port = await freePort();
    try {
      child = await spawnServer(argsFor(port));
    } catch (error) {
      if (attempt < 5 && error instanceof Error && BIND_FAILED.test(error.message)) continue;
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  }

  let current: ChildProcess = child;
  const killOnExit = () => {
    if (current.pid !== undefined && current.exitCode === null) current.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  let stopped = false;

  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return current.pid ?? -1;
    },
    async restart() {
      if (stopped) throw new Error('restart() after stop()');
      await stopChild(current);
      current = await spawnServer(argsFor(port));
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      process.removeListener('exit', killOnExit);
      await stopChild(current);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
