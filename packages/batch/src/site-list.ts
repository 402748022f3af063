/**
 * A site's homepage as a batch knows it: `scheme://host[:port]/` in WHATWG form (host lower-cased,
 * default port dropped), so `HTTP://Example.com:80/a?b` and `http://example.com` are one site.
 * `null` when the text is not an http(s) URL with a host.
 */
export function normalizeSite(text: string): string | null {
  let u: URL;
  try {
    u = new URL(text.trim());
  } catch {
    return null;
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.hostname === '') return null;
  return `${u.protocol}//${u.host}/`;
}

/** One input line, read: a site to walk, or a line that is not a site URL. */
export type SiteLine =
  | { readonly kind: 'site'; readonly site: string; readonly line: number }
  | { readonly kind: 'invalid'; readonly text: string; readonly line: number };

/**
 * The input rules of a batch: one homepage URL a line; blank lines and `#` comments skipped;
 * a site seen before (after normalisation) skipped; a line that is not a URL reported.
 */
export async function* readSiteLines(
  lines: AsyncIterable<string> | Iterable<string>,
): AsyncGenerator<SiteLine> {
  const seen = new Set<string>();
  let n = 0;
  for await (const raw of lines) {
    n++;
    const text = raw.trim();
    if (text === '' || text.startsWith('#')) continue;
    const site = normalizeSite(text);
    if (site === null) {
      yield { kind: 'invalid', text, line: n };
      continue;
    }
    if (seen.has(site)) continue;
    seen.add(site);
    yield { kind: 'site', site, line: n };
  }
}

/**
 * How many items `readSiteLines` gives for these lines (each site once, and each line that is not
 * a site URL): the total a run's progress counts towards, and its summary ends at.
 */
export async function countSiteLines(lines: AsyncIterable<string> | Iterable<string>): Promise<number> {
  let n = 0;
  for await (const _ of readSiteLines(lines)) n++;
  return n;
}
