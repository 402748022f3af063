import { nodeStatusCodes } from './undici.js';

export function reasonPhrase(status: number, fromServer: string | undefined): string {
  const server = fromServer?.trim();
  return server ? server : (nodeStatusCodes()[status] ?? '');
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/** Decodes percent-encoded unreserved characters (RFC 3986 6.2.2.2), leaving every other escape as sent. */
function decodeUnreserved(s: string): string {
  return s.replace(/%([0-9A-Fa-f]{2})/g, (match, hex: string) => {
    const c = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(c) ? c : match;
  });
}

/**
 * An absolute http(s) URL in the form it is requested and reported in: WHATWG-parsed (dot
 * segments removed, non-ASCII percent-encoded) and `%7E`-style escapes of unreserved characters
 * decoded, as python-requests does, so final URLs match usp's. Fragments never go on the wire.
 */
export function parseHttpUrl(url: string): URL | null {
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    // Each setter re-serialises the whole URL and each getter slices it: both are skipped when
    // the text shows there is nothing to change (the parser's own escapes are never of
    // unreserved characters, so a URL given without '%' has none to decode).
    if (url.includes('#')) u.hash = '';
    if (!url.includes('%')) return u;
    if (u.pathname.includes('%')) u.pathname = decodeUnreserved(u.pathname);
    if (u.search.includes('%')) u.search = decodeUnreserved(u.search);
    return u;
  } catch {
    return null;
  }
}

export function firstHeader(v: string | string[] | undefined): string | null {
  if (v === undefined) return null;
  return Array.isArray(v) ? (v[0] ?? null) : v;
}
