/**
 * Structured warnings. Libraries never print: warnings go to the caller's `onWarning`
 * and stay on the sitemap node they concern.
 */

/**
 * The warning codes usp's own packages emit, each described in the one table of core's README
 * ("Warning codes"; a test keeps the two equal, and finds every code the sources emit here).
 */
export type KnownWarningCode =
  | 'invalid-url'
  | 'relative-url'
  | 'duplicate-url'
  | 'duplicate-sitemap'
  | 'invalid-date'
  | 'invalid-priority'
  | 'invalid-changefreq'
  | 'invalid-value'
  | 'invalid-robots'
  | 'missing-namespace'
  | 'unknown-element'
  | 'missing-field'
  | 'malformed-xml'
  | 'truncated'
  | 'doctype-refused'
  | 'not-a-sitemap'
  | 'encoding'
  | 'gzip'
  | 'too-large'
  | 'limit'
  | 'aborted'
  | 'fetch'
  | 'recursion'
  | 'blocked'
  | 'unreachable'
  | 'soft-404'
  | 'homepage'
  | 'not-modified'
  | 'over-spec'
  | 'plugin-error';

/** A warning's code: one of usp's, or a third-party plugin's own. */
export type WarningCode = KnownWarningCode | (string & {});

export interface Warning {
  readonly code: WarningCode;
  readonly message: string;
  /** The sitemap (document) URL the warning concerns. */
  readonly url: string;
}

export type WarningListener = (warning: Warning) => void;
