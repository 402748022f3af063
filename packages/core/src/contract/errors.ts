import { brandClass, isBranded } from './brand.js';

/**
 * Errors thrown for caller mistakes. Bad *content* never throws: it becomes an
 * `InvalidSitemap` plus a warning. Each class has a stable `code` to branch on.
 */
export type UspErrorCode =
  | 'USP_INVALID_ARGUMENT'
  | 'USP_INVALID_URL'
  | 'USP_INVALID_OPTION'
  | 'USP_ABORTED'
  | 'USP_PLUGIN_CONFLICT'
  | 'USP_STATE'
  | 'USP_OUTPUT';

export class UspError extends Error {
  /** True for this error class (or a subclass) from any copy of core (see brand.ts). */
  static override [Symbol.hasInstance](value: unknown): boolean {
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

brandClass(UspError, 'UspError');
brandClass(InvalidUrlError, 'InvalidUrlError');
brandClass(InvalidOptionError, 'InvalidOptionError');
brandClass(PluginConflictError, 'PluginConflictError');
