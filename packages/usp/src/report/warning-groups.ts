import type { KnownWarningCode, Warning } from '@usp-ts/core';

/**
 * What each of usp's warning codes means, as core's README table says it (a test keeps the two
 * equal): the report shows it beside the count.
 */
export const WARNING_MEANINGS: Readonly<Record<KnownWarningCode, string>> = {
  'invalid-url': 'a page or child URL that is not a fetchable http(s) URL, or too long; skipped',
  'relative-url': "a relative URL, resolved against the document's URL",
  'duplicate-url': 'a URL already listed in the document; skipped',
  'duplicate-sitemap':
    'a sitemap already fetched in this walk; listed again as an `InvalidSitemap`, not refetched',
  'invalid-date': 'a date that cannot be read; the field is dropped',
  'invalid-priority': 'a `<priority>` outside 0.0 to 1.0 or not a number; ignored',
  'invalid-changefreq': 'a `<changefreq>` not in the sitemaps.org list; ignored',
  'invalid-value': 'a video field with a value outside its allowed set; dropped',
  'invalid-robots': 'a robots.txt value that cannot be read (`Crawl-delay`); ignored',
  'missing-namespace': 'a sitemap root without (or with the wrong) sitemaps.org namespace; read anyway',
  'unknown-element': 'an element where it does not belong; skipped',
  'missing-field': 'an entry without a required field (`<loc>`, `<image:loc>`, …); dropped',
  'malformed-xml': 'XML syntax errors recovered from, or content after the root element',
  truncated: 'the document ended early; what was read before the cut is kept',
  'doctype-refused': 'a `DOCTYPE` or `ENTITY` declaration: the document is refused',
  'not-a-sitemap': 'an HTML page where a sitemap was expected',
  encoding: 'a declared encoding that is unknown or contradicts the bytes',
  gzip: 'corrupt or cut gzip; what decompressed before the damage is kept',
  'too-large': 'a size cap was passed; the rest was not read',
  limit: 'a limit (pages, children, depth, text, walk size or deadline) stopped reading',
  aborted: "the caller's signal stopped the walk",
  fetch: 'a sitemap could not be fetched, or its body broke off',
  recursion: 'a sitemap that lists itself or an ancestor, or nests too deep',
  blocked: 'a child sitemap on another site, or on an address the walk refuses',
  unreachable: 'an origin given up for this walk (no HTTP response)',
  'soft-404': 'a page answered where a sitemap was expected (no sitemap URL in it)',
  homepage: 'the homepage URL was reduced to `scheme://host[:port]/`',
  'not-modified': 'a 304 answer to a conditional request with no stored copy to replay',
  'over-spec': 'more than 50,000 pages or 50 MB in one document (the sitemaps.org limits); read anyway',
  'plugin-error': 'a format or extension threw; the document is kept as far as it was read',
};

/** Examples kept per code: enough to find the pattern, few enough for a million warnings. */
export const EXAMPLES_PER_CODE = 10;

export interface WarningGroup {
  code: string;
  /** From WARNING_MEANINGS; `null` for a third-party plugin's own code. */
  meaning: string | null;
  count: number;
  examples: { url: string; message: string }[];
}

/** Warnings counted by code and by sitemap, with the first few of each code as examples. */
export class WarningGroups {
  readonly #byCode = new Map<string, WarningGroup>();
  readonly #bySitemap = new Map<string, number>();

  add(w: Warning): void {
    let group = this.#byCode.get(w.code);
    if (group === undefined) {
      const meaning = Object.hasOwn(WARNING_MEANINGS, w.code)
        ? WARNING_MEANINGS[w.code as KnownWarningCode]
        : null;
      group = { code: w.code, meaning, count: 0, examples: [] };
      this.#byCode.set(w.code, group);
    }
    group.count++;
    if (group.examples.length < EXAMPLES_PER_CODE) group.examples.push({ url: w.url, message: w.message });
    this.#bySitemap.set(w.url, (this.#bySitemap.get(w.url) ?? 0) + 1);
  }

  countFor(sitemapUrl: string): number {
    return this.#bySitemap.get(sitemapUrl) ?? 0;
  }

  /** Most frequent first. */
  groups(): WarningGroup[] {
    return [...this.#byCode.values()].sort((a, b) => b.count - a.count || a.code.localeCompare(b.code));
  }
}
