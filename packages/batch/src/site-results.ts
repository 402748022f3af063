import { errorText } from '@usp-ts/core';
import { OutputError } from './output-error.js';
import type { SiteResult, SiteStatus } from './rows.js';
import { isCommitFailure } from './site-job.js';
import type { SiteSink } from './site-sink.js';
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

/**
 * A site's job that failed in an unexpected way: the site becomes its `error` row, committed, and
 * the run goes on with the others. An output or state that cannot be written is the run's end
 * instead (rethrown), as is an error row that cannot be written for that reason.
 */
export async function commitInternalError(site: string, error: unknown, sink: SiteSink): Promise<SiteResult> {
  if (isRunFailure(error)) throw error;
  const result = internalErrorResult(site, error);
  try {
    await sink.begin(site).commit(result);
  } catch (sinkError) {
    if (isRunFailure(sinkError)) throw sinkError;
    // The sink fails for this site even to take its error row: the run still reports it.
  }
  return result;
}

/** A walk the runner's own stop cut short: not committed, so neither reported nor counted. */
export function isInterrupted(result: SiteResult, signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true && result.status === 'partial' && result.reason === 'aborted';
}
