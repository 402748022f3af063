import { brandClass, isBranded } from './brand.js';

/**
 * The one code vocabulary of every error a usp package throws (core, the fetcher, the plugins,
 * batch, the state stores, the queue runner and `usp`), like undici's `UND_ERR_*`: branch on
 * `err.code` after `err instanceof UspError`. Bad *content* never throws: it becomes an
 * `InvalidSitemap` plus a warning (warnings have their own codes, `WarningCode`).
 * The table in core's README says which class throws which code.
 */
export type UspErrorCode =
  // Caller mistakes.
  | 'USP_INVALID_ARGUMENT'
  | 'USP_INVALID_URL'
  | 'USP_INVALID_OPTION'
  | 'USP_PLUGIN_CONFLICT'
  | 'USP_PLUGIN_MODULE'
  | 'USP_USAGE'
  // An optional package a feature needs is not installed (`usp batch --state`, `usp worker`).
  | 'USP_MISSING_PACKAGE'
  // The work was stopped, or the thing asked was closed.
  | 'USP_ABORTED'
  | 'USP_CLOSED'
  // Fetching and reading a body (the fetcher's `WebErrorCode`s, one for one).
  | 'USP_HTTP_STATUS'
  | 'USP_TIMEOUT'
  | 'USP_CONNECTION'
  | 'USP_DNS'
  | 'USP_TLS'
  | 'USP_PROTOCOL'
  | 'USP_REDIRECT_LIMIT'
  | 'USP_BLOCKED'
  | 'USP_TOO_LARGE'
  | 'USP_DECODING'
  // Where results go and what a run keeps.
  | 'USP_STATE'
  | 'USP_OUTPUT'
  // An input file the CLI was given cannot be read.
  | 'USP_INPUT'
  // Running the work elsewhere (a parser worker thread, a queue).
  | 'USP_WORKER'
  | 'USP_JOB_RELEASED'
  | 'USP_JOB_LOCK_LOST';

/** Root of every error a usp package throws: `instanceof UspError`, then `switch (err.code)`. */
export class UspError extends Error {
  /** True for this error class (or a subclass) from any copy of core (see brand.ts). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class `instanceof` asked about, a subclass included
    return isBranded(this, value);
  }

  readonly code: UspErrorCode;
  constructor(code: UspErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UspError';
    this.code = code;
  }
}

/** A URL argument that is not an absolute http(s) URL. */
export class InvalidUrlError extends UspError {
  readonly url: string;
  constructor(url: string, options?: { cause?: unknown }) {
    super('USP_INVALID_URL', `URL ${JSON.stringify(url)} is not an absolute http(s) URL`, options);
    this.name = 'InvalidUrlError';
    this.url = url;
  }
}

/** An option with a wrong type or out-of-range value, reported before any work starts. */
export class InvalidOptionError extends UspError {
  readonly option: string;
  constructor(option: string, message: string) {
    super('USP_INVALID_OPTION', `Option ${option}: ${message}`);
    this.name = 'InvalidOptionError';
    this.option = option;
  }
}

/** Two plugins of one registry claim the same thing (an XML root or a namespace). */
export class PluginConflictError extends UspError {
  constructor(message: string) {
    super('USP_PLUGIN_CONFLICT', message);
    this.name = 'PluginConflictError';
  }
}

/** The text of anything thrown: an error's message, anything else as a string. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

brandClass(UspError, 'UspError');
brandClass(InvalidUrlError, 'InvalidUrlError');
brandClass(InvalidOptionError, 'InvalidOptionError');
brandClass(PluginConflictError, 'PluginConflictError');
