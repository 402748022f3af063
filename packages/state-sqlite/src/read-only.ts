import { existsSync } from 'node:fs';
import { OutputError } from '@usp-ts/batch';
import { errorText } from '@usp-ts/core';
import Database from 'better-sqlite3';

/** A store's file opened for reading only, as `usp export` and `usp report` read it; a file that is missing or not SQLite is an `OutputError` naming it. */
export function openReadOnly(path: string): Database.Database {
  try {
    return new Database(path, { readonly: true, fileMustExist: true, timeout: 200 });
  } catch (cause) {
    // SQLite's words for a missing file name its directory ("the directory does not exist").
    const reason = existsSync(path) ? errorText(cause) : 'no such file';
    throw new OutputError(`cannot open ${path}: ${reason}`, path, { cause });
  }
}

/**
 * What a reader says when its query fails: a file a running batch holds (the store keeps it
 * locked while it writes) is "in use", anything else is the database's own reason.
 */
export function readFailure(path: string, cause: unknown): OutputError {
  const busy = /SQLITE_BUSY|locked/i.test(String((cause as { code?: string }).code ?? errorText(cause)));
  return new OutputError(
    busy
      ? `${path} is in use by a running batch; read it when the run has ended`
      : `cannot read ${path}: ${errorText(cause)}`,
    path,
    { cause },
  );
}
