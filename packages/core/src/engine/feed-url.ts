import { isHttpUrl, resolveUrl } from './url.js';

export interface FeedLink {
  /** The absolute http(s) URL. */
  readonly url: string;
  /** Whether the link was relative and had to be resolved (worth a warning). */
  readonly relative: boolean;
}

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * A feed's link (RSS `<link>`, Atom `href`) as a page URL: stripped; an absolute link kept as
 * written when it passes `isHttpUrl`; a relative one resolved against `base` (the document URL or
 * `xml:base`). `null` for an empty link, another scheme, or one that cannot be resolved.
 */
export function resolveFeedLink(link: string, base: string): FeedLink | null {
  const s = link.trim();
  if (s === '') return null;
  if (SCHEME.test(s)) return isHttpUrl(s) ? { url: s, relative: false } : null;
  const url = resolveUrl(s, base);
  return url !== null && isHttpUrl(url) ? { url, relative: true } : null;
}
