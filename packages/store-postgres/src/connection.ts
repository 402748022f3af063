import pg from 'pg';

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

/**
 * Opens a transaction holding the advisory lock of `key` (a run and a site): one round trip, the
 * key written as a literal (the simple protocol takes two statements, a parameter one).
 */
export async function beginLocked(client: pg.ClientBase, key: string): Promise<void> {
  await client.query(
    `BEGIN; SELECT pg_advisory_xact_lock(hashtextextended(${client.escapeLiteral(key)}, 0))`,
  );
}
