/** The sitemap's key, second in a row's line as `PageTracker` writes it. */
const SITEMAP_KEY = '"sitemap":';
/** The URL's key and its string's quote, next after the sitemap's. */
const URL_KEY = '"url":"';
/**
 * How a held row's line ends (`PageTracker` holds unchanged rows only, `change` last), with its
 * newline: a page with no news story, images, alternates or extension data. These keys hold
 * `null` when they end the line: inside a string value their quotes would be escaped.
 */
const UNCHANGED_LINE_END = ',"newsStory":null,"images":null,"alternates":null,"change":"unchanged"}\n';

/** A block of held rows cut to what varies (`UnchangedBlocks.cut`). */
export interface UnchangedBlock {
  /** The sitemap every row of the block is of. */
  readonly sitemap: string;
  /**
   * The rows as one JSON array of what varies (`[{"url":…,"priority":…,"lastModified":…,
   * "changeFrequency":…},…]`), in the encoding the blocks were made for.
   */
  readonly pages: string;
}

/**
 * Cuts one site's blocks of held rows (`SiteOutput.pageLines`: UTF-8 lines, each ended by '\n')
 * to what varies between their rows, for a store that keeps such a block as one row whose view
 * gives each page its row back (the SQL stores). A block is cut when its `rows` lines are each a
 * plain unchanged row of the site and of the first line's sitemap, as `PageTracker` writes the
 * rows it holds back (nearly all of a run's rows after a few pages were removed): no `\u` escape
 * at all (a lone surrogate, `\u0000`: the stores' JSON readers differ on them), no extension data,
 * every line starting with the site's and the sitemap's keys and then the URL's, and ending with
 * the unchanged tail; any other block is `null`, for the store to add row by row.
 *
 * `encoding`: how `pages` is read from the bytes. `latin1`, one character a byte (`Buffer.from(
 * pages, 'latin1')` gives back its UTF-8 bytes; no byte of a UTF-8 sequence is ASCII, so the ASCII
 * marks are found where they are), or `utf8` for a store that writes text.
 */
export class UnchangedBlocks {
  /** `{"site":<site as JSON>,` in `encoding`. */
  readonly #sitePrefix: string;
  readonly #encoding: 'latin1' | 'utf8';

  constructor(site: string, encoding: 'latin1' | 'utf8') {
    this.#encoding = encoding;
    this.#sitePrefix = Buffer.from(`{"site":${JSON.stringify(site)},`).toString(encoding);
  }

  /** The block cut to what varies, or `null` when it is not one of plain unchanged rows (above). */
  cut(text: Buffer, rows: number): UnchangedBlock | null {
    if (rows === 0 || text.includes('\\u') || text.includes('"extensions":')) return null;
    const s = text.toString(this.#encoding);
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
      const rest = end + 1 - UNCHANGED_LINE_END.length;
      if (end === -1 || rest < start + head.length || s.indexOf(UNCHANGED_LINE_END, rest) !== rest)
        return null;
      kept.push(s.slice(start + prefix.length, rest));
      start = end + 1;
    }
    if (kept.length !== rows) return null;
    return { sitemap: sitemap.url, pages: `[{${kept.join('},{')}}]` };
  }

  /**
   * The sitemap of a block's first line when the line starts with the site's key and then the
   * sitemap's, with `"url"` next (`prefix`: the line up to it, as `s` reads it); `null`
   * otherwise. The sitemap's string ends at the first `","url":` after its opening quote: a quote
   * inside a JSON string is escaped.
   */
  #sitemapOf(text: Buffer, s: string): { prefix: string; url: string } | null {
    const site = this.#sitePrefix;
    const open = site.length + SITEMAP_KEY.length;
    if (!s.startsWith(site) || !s.startsWith(SITEMAP_KEY, site.length) || s[open] !== '"') return null;
    const close = s.indexOf('","url":', open + 1);
    if (close === -1 || s.lastIndexOf('\n', close) !== -1) return null;
    let url: unknown;
    try {
      // Read as latin1, `s`'s offsets are the bytes'.
      url = JSON.parse(
        this.#encoding === 'latin1' ? text.toString('utf8', open, close + 1) : s.slice(open, close + 1),
      );
    } catch {
      return null;
    }
    return typeof url === 'string' ? { prefix: s.slice(0, close + 2), url } : null;
  }
}
