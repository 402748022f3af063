import { errorText } from '@usp-ts/core';
import { OutputError } from './output-error.js';
import type { SiteResult, SiteStatus } from './rows.js';
import { isCommitFailure } from './site-job.js';
import { StateStoreError } from './state-store.js';

/** The result of a site that was not walked (an invalid line) or whose walk failed: counts at zero. */
export function unwalkedResult(site: string, status: SiteStatus, reason: string): SiteResult {
  return {
    site,
    status,
    reason,
    pages: 0,
    sitemaps: 0,
    requests: 0,
    notModified: 0,
    skipped: 0,
    bytes: 0,
    ms: 0,
  };
}

/**
 * The `error` row of a site whose job failed in an unexpected way (a bug, here or in a plugin, a
 * sink or a store): every runner reports it and goes on with the other sites.
 */
export function internalErrorResult(site: string, error: unknown): SiteResult {
  return unwalkedResult(site, 'error', `internal error: ${errorText(error)}`);
}

/** The run cannot go on: its output or its state failed (not one site's problem). */
export function isRunFailure(error: unknown): boolean {
  return error instanceof OutputError || error instanceof StateStoreError || isCommitFailure(error);
}
