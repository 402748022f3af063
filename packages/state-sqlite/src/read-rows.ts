import { OutputError, type PageRow, type PageRowFilter, pageRowOf, pageRowsQuery } from '@usp-ts/batch';
import { errorText } from '@usp-ts/core';
import { openReadOnly } from './read-only.js';

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
      const busy = /SQLITE_BUSY|locked/i.test(String((cause as { code?: string }).code ?? errorText(cause)));
      throw new OutputError(
        busy
          ? `${path} is in use by a running batch; export it when the run has ended`
          : `cannot read ${path}: ${errorText(cause)}`,
        path,
        { cause },
      );
    }
    for (const row of rows) yield pageRowOf(row as Parameters<typeof pageRowOf>[0]);
  } finally {
    db.close();
  }
}
