import type { ColumnValue } from '@usp-ts/batch';

// PostgreSQL's COPY text format: tab-separated, `\N` for NULL, backslash escapes for the
// characters that would end a field or a line.
const SPECIAL = /[\\\t\n\r]/g;
/** The same characters, for a test: most values have none, and are then used as they are. */
const HAS_SPECIAL = /[\\\t\n\r]/;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function field(value: ColumnValue): string {
  if (value === null) return '\\N';
  if (typeof value === 'number') return String(value);
  return HAS_SPECIAL.test(value) ? value.replace(SPECIAL, (c) => ESCAPES[c]) : value;
}

/** One COPY line (with its newline) of `values`, after a first column `first`. */
export function copyLine(first: string, values: readonly ColumnValue[]): string {
  let line = field(first);
  for (const v of values) line += `\t${field(v)}`;
  return `${line}\n`;
}
