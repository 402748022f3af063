/**
 * How a held row's line ends (`PageTracker` holds unchanged rows only, `change` last), with its
 * newline: a page with no news story, images, alternates or extension data. These keys hold
 * `null` when they end the line: inside a string value their quotes would be escaped.
 */
const UNCHANGED_LINE_END = ',"newsStory":null,"images":null,"alternates":null,"change":"unchanged"}\n';
/** The sitemap's key, second in a row's line as `PageTracker` writes it. */
const SITEMAP_KEY = '"sitemap":';
/** The URL's key and its string's quote, next after the sitemap's. */
const URL_KEY = '"url":"';

/** The columns of a block row's COPY line after its sitemap (`COPY_PAGE_COLUMNS`): url '', seven NULLs, the change. */
const BLOCK_MIDDLE = '\t\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\tunchanged\t';

/** COPY text's escape of a value without tab, newline or carriage return: its backslashes doubled. */
const escapeBackslashes = (text: string): string =>
  text.includes('\\') ? text.replaceAll('\\', '\\\\') : text;

/** COPY text of a value (NULL never). */
const copyField = (text: string): string =>
  escapeBackslashes(text).replace(/[\t\n\r]/g, (c) => ESCAPES[c] ?? c);
const ESCAPES: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * The COPY line (`COPY_PAGE_COLUMNS`, with its newline) of ONE `page_data` row holding a block of
 * rows handed over in bulk (`SiteOutput.pageLines`: UTF-8 lines, each ended by '\n'), when the
 * `rows` lines are each a plain unchanged row of `site` and of the first line's sitemap (schema 6:
 * `pages`, a json array of each page's `url`, `priority`, `lastModified` and `changeFrequency`;
 * the row's sitemap, `url` '', `change` 'unchanged'; `page_rows` gives each page its row). `null`
 * otherwise (the caller adds the lines one by one): a `\u` escape anywhere (a lone surrogate,
 * `\u0000`, which `->>` refuses), extension data, a tab or carriage return, a line that does not
 * start with the site's and the first line's sitemap's keys and the URL's, or does not end with
 * the unchanged tail, a count that is not the block's.
 *
 * `sitePrefix`: `{"site":<site as JSON>,`. Each line is cut to what varies
 * (`{"url":…,"priority":…,"lastModified":…,"changeFrequency":…}`), found by native `indexOf`
 * searches, one scan a line for its newline (as `@usp-ts/state-sqlite`'s `PageArrays` does).
 */
export function blockCopyLine(text: Buffer, rows: number, sitePrefix: string): string | null {
  if (rows === 0 || text.includes('\\u') || text.includes('"extensions":')) return null;
  if (text.includes(9) || text.includes(13)) return null;
  const s = text.toString('utf8');
  const sitemap = sitemapOf(s, sitePrefix);
  if (sitemap === null) return null;
  const prefix = sitemap.prefix;
  const head = prefix + URL_KEY;
  const kept: string[] = [];
  for (let start = 0; start < s.length; ) {
    if (s.indexOf(head, start) !== start) return null;
    const end = s.indexOf('\n', start);
    const rest = end + 1 - UNCHANGED_LINE_END.length;
    if (end === -1 || rest < start + head.length || s.indexOf(UNCHANGED_LINE_END, rest) !== rest) return null;
    kept.push(s.slice(start + prefix.length, rest));
    start = end + 1;
  }
  if (kept.length !== rows) return null;
  return `${copyField(sitemap.url)}${BLOCK_MIDDLE}${escapeBackslashes(`[{${kept.join('},{')}}]`)}\n`;
}

/**
 * The sitemap of a block's first line when the line starts with the site's key (`sitePrefix`)
 * and then the sitemap's, with `"url"` next (`prefix`: the line up to it); `null` otherwise. The
 * sitemap's string ends at the first `","url":` after its opening quote: a quote inside a JSON
 * string is escaped.
 */
function sitemapOf(s: string, sitePrefix: string): { prefix: string; url: string } | null {
  const open = sitePrefix.length + SITEMAP_KEY.length;
  if (!s.startsWith(sitePrefix) || !s.startsWith(SITEMAP_KEY, sitePrefix.length) || s[open] !== '"')
    return null;
  const close = s.indexOf('","url":', open + 1);
  if (close === -1 || s.lastIndexOf('\n', close) !== -1) return null;
  let url: unknown;
  try {
    url = JSON.parse(s.slice(open, close + 1));
  } catch {
    return null;
  }
  return typeof url === 'string' ? { prefix: s.slice(0, close + 2), url } : null;
}
