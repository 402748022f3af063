import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPostgres {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` (trust authentication: no password). */
  readonly url: string;
  readonly port: number;
  /** The PID of the postmaster. */
  readonly pid: number;
  /** Creates an empty database and returns its URL (one per test keeps tests apart). */
  createDatabase(name: string): Promise<string>;
  /**
   * Runs one SQL statement in a database of this server (`url` from `createDatabase`) with psql, as
   * a user at a prompt would: the rows as psql prints them unaligned (`|` between columns), one a line.
   */
  query(url: string, sql: string): Promise<string[]>;
  /** Stops the server (fast shutdown, by PID) and deletes its directory. Safe to call twice. */
  stop(): Promise<void>;
}

/** Thrown when PostgreSQL's server binaries cannot be found: the database tests need them. */
export class PostgresMissingError extends Error {
  readonly code = 'ERR_POSTGRES_MISSING';
  constructor(where: string) {
    super(
      `PostgreSQL server binaries (initdb, postgres) not found in ${where}: the database tests need them ` +
        `(Debian/Ubuntu: apt-get install -y postgresql; .ci/run installs it), or USP_PG_BIN=/path/to/bin`,
    );
    this.name = 'PostgresMissingError';
  }
}

const DEBIAN_ROOT = '/usr/lib/postgresql';

/** `USP_PG_BIN` when set, else the newest of Debian's `/usr/lib/postgresql/<major>/bin`. */
function binDir(): string {
  const fromEnv = process.env.USP_PG_BIN;
  if (fromEnv) {
    if (!existsSync(join(fromEnv, 'initdb'))) throw new PostgresMissingError(fromEnv);
    return fromEnv;
  }
  const majors = existsSync(DEBIAN_ROOT)
    ? readdirSync(DEBIAN_ROOT)
        .filter((d) => /^\d+$/.test(d) && existsSync(join(DEBIAN_ROOT, d, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (majors.length === 0) throw new PostgresMissingError(`${DEBIAN_ROOT}/*/bin`);
  return join(DEBIAN_ROOT, majors[0], 'bin');
}

/**
 * PostgreSQL refuses to run as root: as root (CI) the cluster belongs to the `postgres` user that
 * Debian's package creates; otherwise it runs as whoever runs the tests.
 */
function runAs(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (line === undefined) throw new PostgresMissingError('this machine (no postgres user)');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
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

function run(
  file: string,
  args: readonly string[],
  user: { uid: number; gid: number } | null,
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, [...args], { ...(user ?? {}), maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error === null) resolve(String(stdout));
      else reject(new Error(`${file} failed: ${String(stderr).trim().slice(-400) || error.message}`));
    });
  });
}

const READY = /database system is ready to accept connections/;
const BIND_FAILED = /could not bind|Address already in use|could not create any TCP\/IP sockets/;

/** Spawns the postmaster and resolves once it logs that it accepts connections (no polling, no sleep). */
function spawnServer(
  bin: string,
  args: readonly string[],
  user: { uid: number; gid: number } | null,
): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(bin, 'postgres'), [...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(user ?? {}),
    });
    let log = '';
    let settled = false;
    const onData = (chunk: string) => {
      if (settled) return;
      log += chunk;
      if (READY.test(log)) {
        settled = true;
        resolve(child);
      }
    };
    // Keep draining after ready so a chatty server never blocks on a full pipe.
    child.stdout?.setEncoding('utf8').on('data', onData);
    child.stderr?.setEncoding('utf8').on('data', onData);
    child.once('error', (error) => {
      if (settled) return;
      settled = true;
      reject(error);
    });
    child.once('exit', (code, signal) => {
      if (settled) return;
      settled = true;
      reject(new Error(`postgres exited before it was ready (${code ?? signal}): ${log.trim().slice(-400)}`));
    });
  });
}

function waitForExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Fast shutdown (SIGINT: clients disconnected, no wait for them) by PID; SIGKILL after 10 s. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = waitForExit(child);
  process.kill(child.pid, 'SIGINT');
  const guard = setTimeout(() => {
    if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
  }, 10_000);
  await exited;
  clearTimeout(guard);
}

/**
 * Starts a private PostgreSQL cluster on 127.0.0.1 on a free port, in its own temp directory
 * (`initdb`, trust authentication, `fsync` off: a test database, never data to keep). A test must
 * `stop()` it; the server is also killed if the test process exits first.
 */
export async function startTestPostgres(): Promise<TestPostgres> {
  const bin = binDir();
  const user = runAs();
  // As root, the cluster's directory is made where the postgres user can reach it: a test run's
  // TMPDIR is often private to the user who runs it (mode 0700).
  const dir = await mkdtemp(join(user === null ? tmpdir() : '/tmp', 'usp-pg-'));
  const data = join(dir, 'data');
  let child: ChildProcess | undefined;
  let port = 0;
  try {
    if (user !== null) await chown(dir, user.uid, user.gid);
    await run(
      join(bin, 'initdb'),
      ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'],
      user,
    );
    for (let attempt = 0; child === undefined; attempt++) {
      port = await freePort();
      const args = [
        ['-D', data],
        ['-p', String(port)],
        ['-c', 'listen_addresses=127.0.0.1'],
        ['-c', `unix_socket_directories=${dir}`],
        ['-c', 'fsync=off'],
        ['-c', 'synchronous_commit=off'],
        ['-c', 'full_page_writes=off'],
        ['-c', 'max_connections=200'],
      ].flat();
      try {
        child = await spawnServer(bin, args, user);
      } catch (error) {
        if (attempt < 5 && error instanceof Error && BIND_FAILED.test(error.message)) continue;
        throw error;
      }
    }
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const server: ChildProcess = child;
  const killOnExit = () => {
    if (server.pid !== undefined && server.exitCode === null) server.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  let stopped = false;
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    port,
    pid: server.pid ?? -1,
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name))
        throw new Error(`database name ${name}: lower-case letters, digits, _`);
      await run(
        join(bin, 'psql'),
        ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-qc', `CREATE DATABASE ${name}`],
        null,
      );
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    async query(database, sql) {
      const out = await run(join(bin, 'psql'), [database, '-v', 'ON_ERROR_STOP=1', '-tAc', sql], null);
      return out.split('\n').filter((l) => l !== '');
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      process.removeListener('exit', killOnExit);
      await stopChild(server);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
