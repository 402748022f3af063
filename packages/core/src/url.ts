/** usp's `is_http_url` rules (see the conformance helper table), without its quirks we chose to fix. */
export function isHttpUrl(_url: string): boolean {
  throw new Error('not implemented yet');
}

/** `scheme://host[:port]/` of an http(s) URL. Throws `InvalidUrlError` for a non-http(s) URL. */
export function stripUrlToHomepage(_url: string): string {
  throw new Error('not implemented yet');
}

/** Resolves a possibly relative reference against a base URL; `null` when it cannot be resolved. */
export function resolveUrl(_ref: string, _base: string): string | null {
  throw new Error('not implemented yet');
}

/**
 * Key for cycle detection: scheme and host lower-cased, default port dropped, fragment
 * removed, percent-encoding normalised. Two URLs with one key are the same sitemap.
 */
export function urlKey(_url: string): string {
  throw new Error('not implemented yet');
}
