import type { SiteResult } from './rows.js';

/** Counters of a running batch, handed to `onProgress`. */
export interface BatchProgress {
  /** Sites finished (any status, `invalid` lines included). */
  readonly sitesDone: number;
  /** Sites being walked now. */
  readonly sitesActive: number;
  /** Sites skipped because `isDone` said so (a resumed run). */
  readonly sitesSkipped: number;
  readonly pages: number;
  readonly requests: number;
  readonly notModified: number;
  readonly bytes: number;
  /** Sites that ended `unreachable`, `error` or `invalid`. */
  readonly failures: number;
}

type Tally = { -readonly [K in keyof BatchProgress]: BatchProgress[K] };

/** Counters at zero, for a runner (local or queued) to add its sites to. */
export function emptyProgress(): Tally {
  return {
    sitesDone: 0,
    sitesActive: 0,
    sitesSkipped: 0,
    pages: 0,
    requests: 0,
    notModified: 0,
    bytes: 0,
    failures: 0,
  };
}

/** Adds one finished site to the counters: the one rule every runner and report counts by. */
export function countSite(counts: Tally, r: SiteResult): void {
  counts.sitesDone++;
  counts.pages += r.pages;
  counts.requests += r.requests;
  counts.notModified += r.notModified;
  counts.bytes += r.bytes;
  if (r.status === 'unreachable' || r.status === 'error' || r.status === 'invalid') counts.failures++;
}
