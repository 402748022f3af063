import { InvalidUrlError } from '../contract/errors.js';
import { isPythonSpace } from './lines.js';

/**
 * usp's `is_http_url`: `^https?://[^\s/$.?#].[^\s]*$` (case-insensitive, Python's `\s`), so a
 * one-character host such as `http://x` fails; then Python's `urlparse` must accept it and find a
 * host. Like usp, ports and host names are not validated further (`http://a.com:99999/` passes),
 * and values are not trimmed. One pass over the text, no regex: it runs once per line of a
 * plain-text sitemap.
 */
export function isHttpUrl(url: string): boolean {
  if (typeof url !== 'string') return false;
  if (COMMON_HTTP_URL.test(url)) return true;
  let i: number;
  if (startsWithIgnoreCase(url, 'https://')) i = 8;
  else if (startsWithIgnoreCase(url, 'http://')) i = 7;
  else return false;
  const n = url.length;
  if (n < i + 2) return false;
  const first = url.charCodeAt(i);
  // [^\s/$.?#] then `.` (anything but \n), then no whitespace to the end.
  if (
    isPythonSpace(first) ||
    first === 0x2f ||
    first === 0x24 ||
    first === 0x2e ||
    first === 0x3f ||
    first === 0x23
  ) {
    return false;
  }
  if (url.charCodeAt(i + 1) === 0x0a) return false;
  // The netloc (up to the first `/`, `?` or `#`): while it holds only ASCII without `[`, `]` or
  // `@`, Python's hostname is the text before its first `:`, so no slicing is needed.
  let plain = first < 0x80 && first !== 0x5b && first !== 0x5d && first !== 0x40;
  let k = i + 1;
  for (; k < n; k++) {
    const c = url.charCodeAt(k);
    if (c === 0x2f || c === 0x3f || c === 0x23) break;
    if (c <= 0x20 || c >= 0x80) {
      if (k > i + 1 && isPythonSpace(c)) return false;
      if (c >= 0x80) plain = false;
    } else if (c === 0x5b || c === 0x5d || c === 0x40) plain = false;
  }
  const netlocEnd = k;
  for (; k < n; k++) {
    const c = url.charCodeAt(k);
    if ((c <= 0x20 || c >= 0x85) && k > i + 1 && isPythonSpace(c)) return false;
  }
  if (plain) return first !== 0x3a;
  return pythonHostname(url.slice(i, netlocEnd)) !== null;
}

/**
 * A subset of what the pass below accepts: a plain ASCII host that starts with a letter, digit
 * or `-_~%`, then printable ASCII without whitespace. Most URLs are of this form, and a regex
 * runs as native code from the first call, while the pass below runs interpreted until the
 * optimising compiler gets to it; so a sitemap's first thousands of URLs cost less. Anything
 * else (IPv6, userinfo, non-ASCII, control characters) goes to the full pass.
 */
const COMMON_HTTP_URL =
  /^https?:\/\/[a-z0-9\-_~%](?:[a-z0-9.\-_~%:!$&'()*+,;=]+(?:[/?#][\x21-\x7e]*)?|[/?#][\x21-\x7e]*)$/i;

function startsWithIgnoreCase(s: string, prefix: string): boolean {
  if (s.length < prefix.length) return false;
  for (let k = 0; k < prefix.length; k++) {
    const c = s.charCodeAt(k);
    if ((c >= 0x41 && c <= 0x5a ? c + 32 : c) !== prefix.charCodeAt(k)) return false;
  }
  return true;
}

/** `scheme://host[:port]/` of an http(s) URL. Throws `InvalidUrlError` for a non-http(s) URL. */
export function stripUrlToHomepage(url: string): string {
  if (typeof url !== 'string') throw new InvalidUrlError(String(url));
  const text = url.trim();
  const colon = text.indexOf(':');
  const scheme = colon > 0 ? text.slice(0, colon).toLowerCase() : '';
  if ((scheme !== 'http' && scheme !== 'https') || !text.startsWith('//', colon + 1)) {
    throw new InvalidUrlError(url);
  }
  const start = colon + 3;
  const netloc = text.slice(start, netlocEnd(text, start));
  // usp returns `http:///` for `http:///x`; a homepage without a host is a caller mistake.
  if (pythonHostname(netloc) === null) throw new InvalidUrlError(url);
  // The authority is kept as written (case, port, userinfo, IDN), as usp does.
  return `${scheme}://${netloc}/`;
}

/**
 * Resolves a possibly relative reference against a base URL (WHATWG rules); `null` when it cannot
 * be resolved or the result is not http(s).
 */
export function resolveUrl(ref: string, base: string): string | null {
  let u: URL;
  try {
    u = new URL(ref, base);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  return u.href;
}

/**
 * Key for cycle detection: scheme and host lower-cased, default port dropped, fragment
 * removed, percent-encoding normalised. Two URLs with one key are the same sitemap.
 */
export function urlKey(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  // WHATWG parsing already lower-cases scheme and host, drops the default port, turns an empty
  // path into `/` and resolves dot segments; the fragment never reaches the server. Only a `#`
  // starts one, and the setter parses the whole URL again (per sitemap of a batch's walks).
  if (url.includes('#')) u.hash = '';
  return normalisePercentEncoding(u.href);
}

const PCT_RE = /%([0-9a-fA-F]{2})/g;

/**
 * RFC 3986 6.2.2: `%7e` and `%7E` are `~`, `%2f` is `%2F`. Unreserved characters are decoded,
 * every other escape gets upper-case hex.
 */
export function normalisePercentEncoding(s: string): string {
  if (!s.includes('%')) return s;
  return s.replace(PCT_RE, (match, hex: string) => {
    const code = Number.parseInt(hex, 16);
    if (
      (code >= 0x41 && code <= 0x5a) ||
      (code >= 0x61 && code <= 0x7a) ||
      (code >= 0x30 && code <= 0x39) ||
      code === 0x2d ||
      code === 0x2e ||
      code === 0x5f ||
      code === 0x7e
    ) {
      return String.fromCharCode(code);
    }
    return match.toUpperCase();
  });
}

function netlocEnd(url: string, start: number): number {
  let end = url.length;
  for (const d of ['/', '?', '#']) {
    const k = url.indexOf(d, start);
    if (k !== -1 && k < end) end = k;
  }
  return end;
}

/**
 * Python's `urlsplit(...).hostname` for a netloc: `null` when it is empty or `urlsplit` would
 * raise (an unbalanced `[`/`]`, or a non-ASCII netloc whose NFKC form smuggles in a delimiter).
 */
function pythonHostname(netloc: string): string | null {
  const open = netloc.includes('[');
  if (open !== netloc.includes(']')) return null;
  if (!isAscii(netloc)) {
    const bare = netloc.replace(/[@:#?]/g, '');
    const nfkc = bare.normalize('NFKC');
    if (nfkc !== bare && /[/?#@:]/.test(nfkc)) return null;
  }
  const hostinfo = netloc.slice(netloc.lastIndexOf('@') + 1);
  let host: string;
  const bracket = hostinfo.indexOf('[');
  if (bracket !== -1) {
    const rest = hostinfo.slice(bracket + 1);
    const close = rest.indexOf(']');
    host = close === -1 ? rest : rest.slice(0, close);
  } else {
    const colon = hostinfo.indexOf(':');
    host = colon === -1 ? hostinfo : hostinfo.slice(0, colon);
  }
  // Python lower-cases it; callers here only ask whether there is one.
  return host === '' ? null : host;
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** Why a URL cannot be requested as written: see `unfetchableUrl`. */
export type UrlProblem = 'encoding' | 'invalid-url';

/**
 * The usual shape: a host of letters, digits, dots and hyphens, an optional port. A regex, not a
 * loop over the characters: it is native code from the first call, where the loop ran
 * interpreted for a document's first thousands of pages and images and then cost a compile of
 * its own (issue 37); warm, on the sliced strings a parse hands over, the regex took ~80 ns a URL
 * against ~200 for the loop.
 */
const PLAIN_HOST = /^https?:\/\/[a-z0-9.-]+(?::\d{0,5})?(?:[/?#]|$)/i;

/**
 * Whether an absolute URL read from a document can be requested as written, and if not, why:
 * - `encoding`: it holds U+FFFD, the character that replaced bytes not valid in the document's
 *   encoding (`FF FE C0 AF` in UTF-8). Such a URL is skipped, not repaired: the original bytes
 *   are gone, and requesting `%EF%BF%BD` would fetch a URL the site never wrote.
 * - `invalid-url`: the WHATWG URL parser (the one the fetcher requests with) refuses it or its
 *   host, or the scheme is not http(s). usp's `is_http_url` passes `http://example.com&><x/`,
 *   which can never be fetched.
 *
 * `null` when it can be fetched. Pages, child sitemaps, `Sitemap:` lines and extension URLs such
 * as `<image:loc>` all go through this one check. It runs once per page: the common shape skips
 * the parser.
 */
export function unfetchableUrl(url: string): UrlProblem | null {
  if (url.includes('\uFFFD')) return 'encoding';
  if (PLAIN_HOST.test(url)) return null;
  try {
    const u = new URL(url);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '' ? null : 'invalid-url';
  } catch {
    return 'invalid-url';
  }
}

/** What `unfetchableUrl`'s answer means, to follow "Page URL" and the like in a warning. */
export function unfetchableUrlMessage(problem: UrlProblem): string {
  return problem === 'encoding'
    ? "holds bytes that are not valid in the document's encoding (read as U+FFFD)"
    : 'has no valid host';
}
