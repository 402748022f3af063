import { type ColumnValue, pageValues } from '@usp-ts/batch';

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

/** How a held row's line ends (`PageTracker` holds unchanged rows only): a plain one's tail. */
const UNCHANGED_TAIL = PLAIN_TAILS[0];

/** The sitemap's key, second in a row's line as `PageTracker` writes it. */
const SITEMAP_KEY = '"sitemap":';
/** The URL's key and its string's quote, next after the sitemap's. */
const URL_KEY = '"url":"';
/** A held row's line's end, as a block holds it. */
const UNCHANGED_LINE_END = `${UNCHANGED_TAIL}\n`;

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
  /** `#prefix` as its UTF-8 bytes read as latin1, as `#unchangedArray` reads a block. */
  readonly #bytePrefix: string;
  #lines: string[] = [];
  #chars = 0;
  #plain = true;
  #arrays: PageArray[] = [];

  /** The rows of `site`'s commit. */
  constructor(site: string) {
    this.#site = site;
    this.#prefix = `{"site":${JSON.stringify(site)},`;
    this.#bytePrefix = Buffer.from(this.#prefix).toString('latin1');
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
   * A block's rows as one JSON array of what is left of them once the site's and the sitemap's
   * keys and the unchanged tail are cut (`[{"url":…,"priority":…,…},…]`, its bytes, and the sitemap:
   * stored as one block row, `INSERT_UNCHANGED_BLOCK`, whose view gives the other columns), when
   * it holds `rows` lines, each a plain unchanged row of this site and of the first line's
   * sitemap, as `add` would keep it in a plain array: no `\u` escape at all, no extension data,
   * every line starting with the first line's site and sitemap keys (a `PageTracker` holds the
   * rows of one sitemap), then the URL's key and a string, and ending with the unchanged tail;
   * `null` otherwise.
   * Read as latin1, one character a byte (no byte of a UTF-8 sequence is ASCII, so the ASCII marks
   * are found where they are). A raw newline is in no JSON string, so each ends a row.
   */
  #unchangedArray(text: Buffer, rows: number): { form: 'unchanged'; bytes: Buffer; sitemap: string } | null {
    if (text.includes('\\u') || text.includes('"extensions":')) return null;
    const s = text.toString('latin1');
    const sitemap = this.#sitemapOf(text, s);
    if (sitemap === null) return null;
    const prefix = sitemap.prefix;
    const head = prefix + URL_KEY;
    // Each row between the keys cut and the tail, as a slice of `s`. Found with `indexOf` (a
    // native search): `startsWith` on this string, compiled, compared a character at a time and
    // was most of the cost (559 ns a row against 243, 64 KiB blocks of farm-like rows).
    const kept: string[] = [];
    for (let start = 0; start < s.length; ) {
      if (s.indexOf(head, start) !== start) return null;
      // The line's one scan is for its newline; the tail is then looked for where it must start.
      const end = s.indexOf('\n', start);
      const rest = end - UNCHANGED_TAIL.length;
      if (end === -1 || rest < start + head.length || s.indexOf(UNCHANGED_LINE_END, rest) !== rest)
        return null;
      kept.push(s.slice(start + prefix.length, rest));
      start = end + 1;
    }
    if (kept.length !== rows || rows === 0) return null;
    return {
      form: 'unchanged',
      bytes: Buffer.from(`[{${kept.join('},{')}}]`, 'latin1'),
      sitemap: sitemap.url,
    };
  }

  /**
   * The sitemap of a block's first line when the line starts with this site's key and then the
   * sitemap's (`{"site":…,"sitemap":"…",` as `PageTracker` writes it, `prefix`: as latin1, as
   * `s` is the block), with `"url"` next; `null` otherwise. The sitemap's string ends at the first
   * `","url":` after its opening quote: a quote inside a JSON string is escaped.
   */
  #sitemapOf(text: Buffer, s: string): { prefix: string; url: string } | null {
    const site = this.#bytePrefix;
    const open = site.length + SITEMAP_KEY.length;
    if (!s.startsWith(site) || !s.startsWith(SITEMAP_KEY, site.length) || s[open] !== '"') return null;
    const close = s.indexOf('","url":', open + 1);
    if (close === -1 || s.lastIndexOf('\n', close) !== -1) return null;
    let url: unknown;
    try {
      url = JSON.parse(text.toString('utf8', open, close + 1));
    } catch {
      return null;
    }
    return typeof url === 'string' ? { prefix: s.slice(0, close + 2), url } : null;
  }

  #flush(): void {
    if (this.#lines.length === 0) return;
    const bytes = Buffer.from(`[${this.#lines.join(',')}]`, 'utf8');
    this.#arrays.push({ form: this.#plain ? 'plain' : 'rows', bytes });
    this.#lines.length = 0;
    this.#chars = 0;
  }
}
