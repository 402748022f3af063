import type { ColumnValue } from '@usp-ts/batch';
import pg from 'pg';

// A site's commit goes to the server as one text of several statements (the simple protocol, which
// takes no parameters), so its values are written as literals. Each round trip costs the client a
// socket write and a read; on a run where little changed they were most of its CPU.

const QUOTE_OR_BACKSLASH = /['\\]/;

/**
 * `text` as a string literal. Most values hold neither a quote nor a backslash and are only
 * wrapped; the rest go through pg's `escapeLiteral`, a loop over every character (a site's
 * state, as JSON, is most of a commit's text).
 */
export function quote(text: string): string {
  return QUOTE_OR_BACKSLASH.test(text) ? pg.escapeLiteral(text) : `'${text}'`;
}

/** A value as a quoted literal: the server reads it as the column's type (`'1'` a boolean, `'5'` a bigint). */
export function literal(value: ColumnValue | boolean): string {
  return value === null ? 'NULL' : quote(String(value));
}

/** A `text[]` literal. */
export function textArray(values: readonly string[]): string {
  return values.length === 0 ? `'{}'::text[]` : `ARRAY[${values.map(quote).join(', ')}]`;
}

/** `INSERT INTO table (columns) VALUES (…), (…);` of rows of literals, or nothing for no rows. */
export function insertRows(table: string, columns: readonly string[], rows: readonly string[]): string {
  return rows.length === 0 ? '' : `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${rows.join(', ')};`;
}

/** One row of `insertRows`: `(v1, v2, …)`. */
export function rowOf(values: readonly (ColumnValue | boolean)[]): string {
  return `(${values.map(literal).join(', ')})`;
}

/**
 * A statement that fails the transaction with `message` when `condition` (an SQL boolean) holds
 * (PL/pgSQL's `RAISE`, which every database has unless it was dropped).
 */
export function failIf(condition: string, message: string): string {
  const body = `BEGIN IF ${condition} THEN RAISE EXCEPTION ${quote(message)}; END IF; END`;
  let tag = '$usp$';
  while (body.includes(tag)) tag = `$${tag.slice(1, -1)}x$`;
  return `DO ${tag}${body}${tag};`;
}
