import { OutputError, type PageRow, type PageRowFilter, pageRowOf, pageRowsQuery } from '@usp-ts/batch';
import { errorText } from '@usp-ts/core';
import Database from 'better-sqlite3';

/**
 * Streams the page rows of a run in an SQLite store (`openSqliteStore`'s file) as `PageRow`s, one
 * at a time from SQLite's cursor. The file is opened read-only; one a running batch holds is
 * refused (`OutputError`: it is in use).
 */
export function* readSqlitePageRows(path: string, filter: PageRowFilter = {}): Generator<PageRow> {
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true, timeout: 200 });
  } catch (cause) {
    throw new OutputError(`cannot open ${path}: ${errorText(cause)}`, path, { cause });
  }
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
