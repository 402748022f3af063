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
