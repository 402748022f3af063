import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresMissingError, startTestPostgres, type TestPostgres } from '../src/index.js';

/** One query through Debian's psql (the tool's own test needs no client library). */
function psql(url: string, sql: string): string {
  return execFileSync('psql', [url, '-XAtc', sql], { encoding: 'utf8' }).trim();
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startTestPostgres', () => {
  let pg: TestPostgres | undefined;
  afterEach(async () => {
    await pg?.stop();
    pg = undefined;
  });

  it('starts a cluster on 127.0.0.1 that answers, with fsync off, and stops it by PID', async () => {
    pg = await startTestPostgres();
    expect(pg.url).toBe(`postgres://postgres@127.0.0.1:${pg.port}/postgres`);
    expect(psql(pg.url, 'SELECT 1 + 1')).toBe('2');
    expect(psql(pg.url, 'SHOW fsync')).toBe('off');
    expect(psql(pg.url, 'SHOW server_version')).toMatch(/^\d+\./);
    const pid = pg.pid;
    expect(alive(pid)).toBe(true);
    await pg.stop();
    expect(alive(pid)).toBe(false);
    await pg.stop();
  });

  it('creates empty databases, and two clusters get two ports', async () => {
    pg = await startTestPostgres();
    const a = await pg.createDatabase('a_test');
    psql(a, 'CREATE TABLE t (x int); INSERT INTO t VALUES (1)');
    const b = await pg.createDatabase('b_test');
    expect(psql(b, `SELECT count(*) FROM pg_tables WHERE tablename = 't'`)).toBe('0');
    const other = await startTestPostgres();
    try {
      expect(other.port).not.toBe(pg.port);
    } finally {
      await other.stop();
    }
  });

  it('fails with one clear line when the binaries are missing', async () => {
    const saved = process.env.USP_PG_BIN;
    process.env.USP_PG_BIN = '/nonexistent/bin';
    try {
      const error = await startTestPostgres().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(PostgresMissingError);
      expect((error as Error).message).not.toContain('\n');
      expect((error as Error).message).toContain('apt-get install -y postgresql');
    } finally {
      if (saved === undefined) delete process.env.USP_PG_BIN;
      else process.env.USP_PG_BIN = saved;
    }
  });
});
