import type { StopReason, WalkSummary } from '../contract/walk-summary.js';
import type { WebResponse } from '../contract/web-client.js';
import type { WalkConfig } from './config.js';

/** A stop reason in the words of the walk's warnings, its unfetched nodes and its summary. */
export function stopText(reason: StopReason, config: WalkConfig): string {
  switch (reason) {
    case 'aborted':
      return 'the walk was aborted';
    case 'deadline':
      return `the walk's deadline of ${config.deadlineMs} ms passed`;
    case 'maxSitemaps':
      return `the walk's limit of ${config.maxSitemaps} sitemaps was reached`;
    case 'maxPages':
      return `the walk's limit of ${config.maxPages} pages was reached`;
  }
}

/**
 * A status that refuses the request rather than answers it: 429 or a server error. A site that
 * answered nothing else (after the retries and the breaker) served nothing, as one that never
 * answered.
 */
function refusal(status: number): boolean {
  return status === 429 || status >= 500;
}

/** Counts what the site answered, to say at the end whether it was reached at all. */
export class OutcomeTally {
  /** Requests that got an HTTP response other than a refusal: the site was reached. */
  #answered = 0;
  /** The first request that got no response at all, as `url: message`. */
  #firstFailure: string | null = null;
  /** The first request refused (429, 5xx), as `url: status reason`. */
  #firstRefusal: string | null = null;

  record(url: string, response: WebResponse): void {
    if (response.kind !== 'error') {
      this.#answered++;
      return;
    }
    const status = response.status;
    if (status === null) {
      this.#firstFailure ??= `${url}: ${response.message}`;
    } else if (refusal(status)) {
      this.#firstRefusal ??= `${url}: ${response.message}`;
    } else {
      this.#answered++;
    }
  }

  /**
   * How the walk ended: `partial` when the caller's signal aborted it (whenever it came: the
   * caller stopped the walk, the site did not show itself unreachable), or when a budget or the
   * deadline stopped it after something was read; `unreachable` when no request got an HTTP
   * response other than a refusal (429, 5xx) and something was tried or the deadline came
   * first; `ok` otherwise.
   */
  summary(stoppedBy: StopReason | null, config: WalkConfig): WalkSummary {
    const unreachableOrigins = config.breaker?.openOrigins().map((o) => o.origin) ?? [];
    const silent = this.#answered === 0 && stoppedBy !== 'aborted';
    if (silent && this.#firstRefusal !== null) {
      const reason = `every request was refused: ${this.#firstRefusal}`;
      return { outcome: 'unreachable', reason, stoppedBy, unreachableOrigins };
    }
    if (silent && (this.#firstFailure !== null || stoppedBy === 'deadline')) {
      const reason = this.#firstFailure ?? (stoppedBy === null ? 'no response' : stopText(stoppedBy, config));
      return { outcome: 'unreachable', reason, stoppedBy, unreachableOrigins };
    }
    if (stoppedBy !== null) {
      return { outcome: 'partial', reason: stopText(stoppedBy, config), stoppedBy, unreachableOrigins };
    }
    return { outcome: 'ok', reason: null, stoppedBy, unreachableOrigins };
  }
}
