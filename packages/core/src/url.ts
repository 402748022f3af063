import { InvalidUrlError } from './errors.js';

// Python's `\s` (str.isspace), not JavaScript's: it includes \x1c-\x1f and \x85, and not U+FEFF.
const PY_SPACE =
  '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
/** usp's `^https?://[^\s/$.?#].[^\s]*$` (case-insensitive) with Python's whitespace class. */
const HTTP_URL_RE = new RegExp(`^https?://[^${PY_SPACE}/$.?#][^\\n][^${PY_SPACE}]*$`, 'i');

/**
 * usp's `is_http_url`: the URL regex above (so a one-character host such as `http://x` fails),
 * then Python's `urlparse` must accept it and find a host. Like usp, ports and host names are not
 * validated further (`http://a.com:99999/` passes), and values are not trimmed.
 */
export function isHttpUrl(url: string): boolean {
  if (typeof url !== 'string' || url === '' || !HTTP_URL_RE.test(url)) return false;
  // The regex guarantees `http(s)://`; the netloc runs to the first `/`, `?` or `#`.
  const start = url.indexOf('//') + 2;
  const netloc = url.slice(start, netlocEnd(url, start));
  return pythonHostname(netloc) !== null;
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
  // path into `/` and resolves dot segments; the fragment never reaches the server.
  u.hash = '';
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
  return host === '' ? null : host.toLowerCase();
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}
