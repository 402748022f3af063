/**
 * Structured warnings. Libraries never print: warnings go to the caller's `onWarning`
 * and stay on the sitemap node they concern.
 */
export type WarningCode =
  | 'invalid-url'
  | 'relative-url'
  | 'duplicate-url'
  | 'duplicate-sitemap'
  | 'invalid-date'
  | 'invalid-priority'
  | 'invalid-changefreq'
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
  | 'fetch'
  | 'recursion'
  | 'blocked'
  | 'unreachable'
  | 'soft-404'
  | 'over-spec'
  | (string & {});

export interface Warning {
  readonly code: WarningCode;
  readonly message: string;
  /** The sitemap (document) URL the warning concerns. */
  readonly url: string;
}

export type WarningListener = (warning: Warning) => void;
