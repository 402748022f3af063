import { type PageRow, type PageRowFilter, pageRowOf, pageRowsQuery } from '@usp-ts/batch';
import { openReadOnly, readFailure } from './read-only.js';

/**
 * Streams the page rows of a run in an SQLite store (`openSqliteStore`'s file) as `PageRow`s, one
 * at a time from SQLite's cursor. The file is opened read-only; one a running batch holds is
 * refused (`OutputError`: it is in use).
 */
export function* readSqlitePageRows(path: string, filter: PageRowFilter = {}): Generator<PageRow> {
  const db = openReadOnly(path);
  try {
    const { sql, params } = pageRowsQuery(filter, () => '?');
    let rows: IterableIterator<unknown>;
    try {
      rows = db.prepare(sql).iterate(...params);
    } catch (cause) {
      throw readFailure(path, cause);
    }
    for (const row of rows) yield pageRowOf(row as Parameters<typeof pageRowOf>[0]);
  } finally {
    db.close();
  }
}
