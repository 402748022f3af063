import { type ColumnValue, type PageRow, pageValues } from '@usp-ts/batch';

// PostgreSQL's COPY text format: tab-separated, `\N` for NULL, backslash escapes for the
// characters that would end a field or a line.
const SPECIAL = /[\\\t\n\r]/g;
/** The same characters, for a test: most values have none, and are then used as they are. */
const HAS_SPECIAL = /[\\\t\n\r]/;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A value as a COPY text field (`\\N` for NULL), escaped. */
export function field(value: ColumnValue): string {
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

/**
 * The page columns a COPY line holds, in the order of a page row's JSON keys (so that a line is
 * made from a row's JSON text in one pass), then `pages` (schema 6: NULL but in a block row,
 * `blockCopyLine`). `run_id` and `site` are not in it: the same for every row of a site's commit,
 * they come from the transaction's settings (schema 3's defaults).
 */
export const COPY_PAGE_COLUMNS = [
  'sitemap',
  'url',
  'priority',
  'last_modified',
  'change_frequency',
  'news_story',
  'images',
  'alternates',
  'extensions',
  'change',
  'pages',
] as const;

/** Where each column of `COPY_PAGE_COLUMNS` is in `pageValues`' values (`PAGE_COLUMNS` order, `site` first). */
const FROM_VALUES = [1, 2, 5, 3, 4, 7, 8, 9, 10, 6] as const;

/**
 * A page row's COPY line (with its newline): `COPY_PAGE_COLUMNS`, its site being the commit's.
 * The values are `pageValues`', so a row reads back as the other stores keep it.
 */
export function pageCopyLine(row: PageRow): string {
  const values = pageValues(row);
  let line = field(values[FROM_VALUES[0]]);
  for (let i = 1; i < FROM_VALUES.length; i++) line += `\t${field(values[FROM_VALUES[i]])}`;
  return `${line}\t\\N\n`;
}

// A page row's JSON text to its COPY line without making the row, for the rows nearly every page
// of a run gives: a plain page (no news, images, alternates or extension data) and a removed one,
// as `JSON.stringify` writes a `PageRow` (keys in its order). A string here holds no quote,
// backslash or control character: its JSON text is then its value, and holds nothing COPY escapes.
// A priority is a number whose JSON text is its `String` (below 1e21, at least 1e-6, 15 digits at
// most). One regular expression reads a line in one pass; parsing it and making the line from the
// row took three times the instructions (callgrind, 100,000 rows).
const STRING = '"([^"\\\\\\u0000-\\u001f]*)"';
const OR_NULL = `(?:${STRING}|null)`;
const HEAD = `^\\{"site":${STRING},"sitemap":${STRING},"url":${STRING},`;
const PLAIN = new RegExp(
  `${HEAD}"priority":(0|1|0\\.(?!0{6})\\d{0,14}[1-9]),"lastModified":${OR_NULL},"changeFrequency":${OR_NULL},` +
    '"newsStory":null,"images":null,"alternates":null,"change":"(new|changed|unchanged)"\\}$',
);
const REMOVED = new RegExp(`${HEAD}"change":"removed"\\}$`);
const NULL = '\\N';

/**
 * The COPY line (`COPY_PAGE_COLUMNS`, with its newline) of a page row given as its JSON text
 * (`SiteOutput.pageLine`), when it is a plain or a removed page's of site `site`: the line
 * `pageCopyLine(JSON.parse(json))` gives. `null` for any other text: the caller parses it.
 */
export function copyLineOfJson(json: string, site: string): string | null {
  const m = PLAIN.exec(json);
  if (m !== null) {
    if (m[1] !== site) return null;
    return `${m[2]}\t${m[3]}\t${m[4]}\t${m[5] ?? NULL}\t${m[6] ?? NULL}\t${NULL}\t${NULL}\t${NULL}\t${NULL}\t${m[7]}\t${NULL}\n`;
  }
  const r = REMOVED.exec(json);
  if (r === null || r[1] !== site) return null;
  return `${r[2]}\t${r[3]}\t${NULL}\t${NULL}\t${NULL}\t${NULL}\t${NULL}\t${NULL}\t${NULL}\tremoved\t${NULL}\n`;
}
