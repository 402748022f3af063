import { UspError } from '../contract/errors.js';

type GetDomain = (host: string, options: { allowPrivateDomains: boolean }) => string | null;
let getDomain: GetDomain | null = null;

/**
 * Loads the public suffix list `sameSite` needs. Only `hostPolicy: 'same-site'` uses it, and the
 * list is most of the memory and import time of the whole library, so nobody else pays for it.
 */
export async function loadPublicSuffixList(): Promise<void> {
  getDomain ??= (await import('tldts')).getDomain;
}

/**
 * Whether two URLs are on one site: same host, or hosts with one registrable domain under the public
 * suffix list (`a.example.co.uk` and `b.example.co.uk` are; `a.github.io` and `b.github.io` are not).
 * IP addresses and single-label hosts are their own site. Needs `loadPublicSuffixList()` first.
 */
export function sameSite(a: string, b: string): boolean {
  const ha = hostOf(a);
  const hb = hostOf(b);
  if (ha === null || hb === null) return false;
  if (ha === hb) return true;
  if (getDomain === null)
    throw new UspError('USP_INVALID_ARGUMENT', 'sameSite: call loadPublicSuffixList() first');
  const da = getDomain(ha, { allowPrivateDomains: true });
  return da !== null && da === getDomain(hb, { allowPrivateDomains: true });
}

/**
 * The `hostPolicy: 'same-site'` refusal of `url` for a walk of `homepageUrl`: why it is off the
 * site, or `null` when it may be fetched.
 */
export function offSiteReason(url: string, homepageUrl: string): string | null {
  return sameSite(url, homepageUrl)
    ? null
    : `which is outside the site of ${homepageUrl} (hostPolicy 'same-site')`;
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return null;
  }
}
