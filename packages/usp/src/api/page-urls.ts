import { type WalkPagesOptions, walkPages } from './tree.js';

/**
 * Every page URL a website's sitemaps list, each once, in the order the walk first met it: the
 * one call for "give me the URLs" (as sitemapper's `fetch()` or crawlee's sitemap loader). The
 * walk is `walkPages`', with the same options; nothing but the URLs is kept, so memory grows with
 * the site's URL count (about 100 MB for a million): iterate `walkPages` to handle them as they
 * come instead. How the walk ended (`ok`, `partial`, `unreachable`) is not in a string list:
 * `walkPages(...).summary` has it.
 */
export async function pageUrls(homepageUrl: string, options: WalkPagesOptions = {}): Promise<string[]> {
  const seen = new Set<string>();
  for await (const { page } of walkPages(homepageUrl, options)) seen.add(page.url);
  return [...seen];
}
