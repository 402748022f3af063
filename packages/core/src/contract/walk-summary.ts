/** Why a walk stopped before it had fetched everything it found. */
export type StopReason = 'aborted' | 'deadline' | 'maxSitemaps' | 'maxPages';

/**
 * How a walk ended:
 * - `ok`: it fetched everything it found (404s and broken documents included: the site answered);
 * - `unreachable`: no request got an HTTP response (network failures, blocked addresses aside),
 *   or the deadline came before any did, or every answer was a refusal (429, 5xx): the server
 *   served nothing;
 * - `partial`: the caller's signal aborted it (at any time, before the first request included),
 *   or a budget (`maxSitemaps`, `maxPages`) or the deadline cut it after something was read.
 *
 * An abort resolves, where `fetch` rejects: a walk is many requests, and what it read before the
 * abort (a tree whose pages wait in a store, pages a consumer already has) is kept, as it is for
 * the deadline; `stoppedBy: 'aborted'` tells it from the walk's own limits.
 */
export type WalkOutcome = 'ok' | 'unreachable' | 'partial';

/** The end of a walk, on the tree's root (`IndexWebsiteSitemap.summary`) and on a `PageWalk`. */
export interface WalkSummary {
  readonly outcome: WalkOutcome;
  /**
   * One line saying why, `null` for `ok`: the first network failure (`URL: message`) or the
   * stop (`the walk's deadline of 20000 ms passed`).
   */
  readonly reason: string | null;
  /** The budget, deadline or abort that stopped the walk, `null` when nothing did. */
  readonly stoppedBy: StopReason | null;
  /** Origins the walk's breaker gave up on (`http://host:port`), in the order it did. */
  readonly unreachableOrigins: readonly string[];
}

/** The summary of a walk that has not said otherwise. */
export const OK_SUMMARY: WalkSummary = Object.freeze({
  outcome: 'ok',
  reason: null,
  stoppedBy: null,
  unreachableOrigins: Object.freeze([]) as readonly string[],
});
