import { OutputError } from '@usp-ts/batch';
import { errorText } from '@usp-ts/core';
import Database from 'better-sqlite3';

/** A store's file opened for reading only, as `usp export` and `usp report` read it; a file that is missing or not SQLite is an `OutputError` naming it. */
export function openReadOnly(path: string): Database.Database {
  try {
    return new Database(path, { readonly: true, fileMustExist: true, timeout: 200 });
  } catch (cause) {
    throw new OutputError(`cannot open ${path}: ${errorText(cause)}`, path, { cause });
  }
}
