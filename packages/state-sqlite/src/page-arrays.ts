import { type ColumnValue, pageValues, UnchangedBlocks } from '@usp-ts/batch';

/**
 * Characters of page rows gathered as strings before they become bytes. The lines waiting for
 * their array are young strings that survive scavenges while 16 sites are walked at once: kept
 * small, as the NDJSON sink's held rows are (`HeldRows` in `@usp-ts/batch`).
 */
const ARRAY_CHARS = 16 * 1024;

/**
 * How the line of a page with no news story, images, alternates or extension data ends (as
 * `PageTracker` writes it, `change` last, or unmarked). These three keys hold `null` when they
 * end the line: inside a string value their quotes would be escaped.
 */
const PLAIN_TAILS = [
  ',"newsStory":null,"images":null,"alternates":null,"change":"unchanged"}',
  ',"newsStory":null,"images":null,"alternates":null,"change":"new"}',
  ',"newsStory":null,"images":null,"alternates":null,"change":"changed"}',
  ',"newsStory":null,"images":null,"alternates":null}',
] as const;

/**
 * Whether a row's line has neither news, images, alternates nor extension data (most rows). A
 * loop, unchanged rows first (nearly all of a run after a few pages were removed): the `some`
 * closure was 1.7 % of such a run's CPU profile.
 */
function isPlain(line: string): boolean {
  for (const tail of PLAIN_TAILS) {
    if (line.endsWith(tail)) return !line.includes('"extensions":');
  }
  return false;
}

/**
 * A lone surrogate in a string, as `JSON.stringify` writes it (`\ud800`; upper-case hex from other
 * writers). SQLite's JSON reader turns that escape into the surrogate's three bytes, which are not
 * UTF-8, where binding the string leaves the encoding to Node's (a replacement character on
 * Node 24): such a row is bound, as every row was before, so the column holds what it did.
 */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * One JSON array of rows (`bytes`) in one of three forms, each with its insert: `rows` as they
 * came, `plain` when all of them are (`isPlain`), `unchanged` for plain unchanged rows of the site
 * and of one sitemap (which its insert binds, `sitemap`) cut to the keys that vary (`addLines`); or
 * one row's column values to bind (`values`, its site
 * first: a row with a lone surrogate, `SURROGATE_ESCAPE`, or a row of another site than the one
 * committed).
 */
export type PageArray =
  | { readonly form: 'rows' | 'plain'; readonly bytes: Buffer; readonly values?: undefined }
  | {
      readonly form: 'unchanged';
      readonly bytes: Buffer;
      readonly sitemap: string;
      readonly values?: undefined;
    }
  | { readonly values: ColumnValue[] };

/**
 * One site's page rows until its commit, as JSON arrays of their lines (`[line,line,…]`) in UTF-8
 * bytes, about `ARRAY_CHARS` characters each: outside the JS heap while the site is walked (held
 * as strings, the lines of a run after a few pages were removed took the process from 194 to
 * 241 MiB), and each array is one insert, which SQLite takes apart without a row object in JS.
 * Plain rows and the others go to separate arrays, in order: a plain row's insert reads 7 keys,
 * not 11. The arrays' rows are of the site committed, whose key the insert binds, not reads (a
 * line starts with it as `PageTracker` writes it); a row with a lone surrogate or of another site
 * comes as its values, in its place. Rows handed over in bulk (`addLines`) stay the lines they
 * came as (`lines`: '\n'-ended, which the insert joins into an array) when all are plain.
 */
export class PageArrays {
  readonly #site: string;
  readonly #prefix: string;
  readonly #blocks: UnchangedBlocks;
  #lines: string[] = [];
  #chars = 0;
  #plain = true;
  #arrays: PageArray[] = [];

  /** The rows of `site`'s commit. */
  constructor(site: string) {
    this.#site = site;
    this.#prefix = `{"site":${JSON.stringify(site)},`;
    this.#blocks = new UnchangedBlocks(site, 'latin1');
  }

  /**
   * Rows as UTF-8 lines, each ended by '\n' (`SiteOutput.pageLines`): kept as they are when every
   * one is a plain unchanged row of this site (the rows `PageTracker` held back: nearly all of a
   * run after a few pages were removed), without a string a line; otherwise added one by one.
   */
  addLines(text: Buffer, rows: number): void {
    const array = this.#unchangedArray(text, rows);
    if (array !== null) {
      this.#flush();
      this.#arrays.push(array);
      return;
    }
    const lines = text.toString('utf8').split('\n');
    lines.pop();
    for (const line of lines) this.add(line);
  }

  /** One row's JSON text (`JSON.stringify` of a `PageRow`). */
  add(line: string): void {
    if ((line.includes('\\u') && SURROGATE_ESCAPE.test(line)) || !this.#ofSite(line)) {
      this.#flush();
      this.#arrays.push({ values: pageValues(JSON.parse(line)) });
      return;
    }
    const plain = isPlain(line);
    if (plain !== this.#plain) {
      this.#flush();
      this.#plain = plain;
    }
    this.#lines.push(line);
    this.#chars += line.length;
    if (this.#chars >= ARRAY_CHARS) this.#flush();
  }

  /** The rows added since the last `clear`, in order, as JSON arrays. */
  arrays(): readonly PageArray[] {
    this.#flush();
    return this.#arrays;
  }

  clear(): void {
    this.#lines = [];
    this.#chars = 0;
    this.#arrays = [];
  }

  /** Whether a row is of the site committed: its line starts with the key (rows in another key order are read). */
  #ofSite(line: string): boolean {
    return line.startsWith(this.#prefix) || (JSON.parse(line) as { site?: unknown }).site === this.#site;
  }

  /**
   * A block of plain unchanged rows of this site and of one sitemap (`UnchangedBlocks`) as one
   * JSON array of what varies between its rows (its bytes) and the sitemap: stored as one block
   * row, `INSERT_UNCHANGED_BLOCK`, whose view gives the other columns; `null` for any other block.
   */
  #unchangedArray(text: Buffer, rows: number): { form: 'unchanged'; bytes: Buffer; sitemap: string } | null {
    const block = this.#blocks.cut(text, rows);
    if (block === null) return null;
    return { form: 'unchanged', bytes: Buffer.from(block.pages, 'latin1'), sitemap: block.sitemap };
  }

  #flush(): void {
    if (this.#lines.length === 0) return;
    const bytes = Buffer.from(`[${this.#lines.join(',')}]`, 'utf8');
    this.#arrays.push({ form: this.#plain ? 'plain' : 'rows', bytes });
    this.#lines.length = 0;
    this.#chars = 0;
  }
}
