import { OutputError } from '@usp-ts/batch';
import { errorText } from '@usp-ts/core';
import pg from 'pg';
import { quote } from './sql-text.js';

/**
 * Where to connect: a `postgres://` (or `postgresql://`) URL, or nothing to take everything from
 * the standard `PG*` variables (`PGHOST`, `PGPORT`, `PGDATABASE`, `PGUSER`, `PGPASSWORD`) and
 * `~/.pgpass`. A URL without a password takes it from `PGPASSWORD` or `~/.pgpass`, so it never
 * has to be on a command line.
 */
export function createPool(url: string | undefined, max: number): pg.Pool {
  return new pg.Pool({ ...(url !== undefined && url !== '' ? { connectionString: url } : {}), max });
}

/** The URL as messages may show it: without its password. */
export function redactUrl(url: string | undefined): string {
  if (url === undefined || url === '') return 'PostgreSQL (PG* environment)';
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return 'PostgreSQL (unparsable URL)';
  }
}

/** The statement that takes the transaction's advisory lock of `key`. */
export function lockSql(key: string): string {
  return `SELECT pg_advisory_xact_lock(hashtextextended(${quote(key)}, 0));`;
}

/** A connection of `pool`, or `OutputError` saying why there is none (`where`: the redacted URL). */
export async function connect(pool: pg.Pool, where: string): Promise<pg.PoolClient> {
  try {
    return await pool.connect();
  } catch (cause) {
    throw new OutputError(`cannot connect to ${where}: ${errorText(cause)}`, where, { cause });
  }
}
