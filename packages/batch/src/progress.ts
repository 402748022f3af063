import type { SiteResult } from './rows.js';

/**
 * Counters of a running batch, handed to `onProgress`; the same counters make a run's summary.
 * The rule every runner (local, queue producer, worker) and report counts by: each line of the
 * input that `readSiteLines` yields is one site, counted once, either in `statuses` (ended in
 * this run, by its status) or in `sitesSkipped` (done by an earlier part of a resumed run). So a
 * finished run has `sitesDone + sitesSkipped` equal to `countSiteLines` of its input.
 */
export interface BatchProgress {
  /** Sites ended in this run, whatever their status: the sum of `statuses`. */
  readonly sitesDone: number;
  /** Sites being walked now. */
  readonly sitesActive: number;
  /** Sites skipped because `isDone` said so: done before (a resumed run). */
  readonly sitesSkipped: number;
  /**
   * Sites ended in this run by status (`ok`, `unreachable`, `partial`, `invalid`, `error`, and any
   * word of a runner's own, such as a queue's jobs that failed): what a summary lists.
   */
  readonly statuses: Readonly<Record<string, number>>;
  readonly pages: number;
  /** Requests sent (a request refused before it left, by the private-network guard, is not one). */
  readonly requests: number;
  readonly notModified: number;
  readonly bytes: number;
}

/** Counters a runner adds to (`countSite`, `countStatus`); `snapshotProgress` hands them out. */
export type ProgressTally = { -readonly [K in keyof BatchProgress]: BatchProgress[K] } & {
  statuses: Record<string, number>;
};

/** Counters at zero, for a runner (local or queued) to add its sites to. */
export function emptyProgress(): ProgressTally {
  return {
    sitesDone: 0,
    sitesActive: 0,
    sitesSkipped: 0,
    statuses: {},
    pages: 0,
    requests: 0,
    notModified: 0,
    bytes: 0,
  };
}

/** Counts a site that ended with `status` (a queue's failed job, which has no result row). */
export function countStatus(counts: ProgressTally, status: string): void {
  counts.sitesDone++;
  counts.statuses[status] = (counts.statuses[status] ?? 0) + 1;
}

/** Adds one finished site to the counters: the one rule every runner and report counts by. */
export function countSite(counts: ProgressTally, r: SiteResult): void {
  countStatus(counts, r.status);
  counts.pages += r.pages;
  counts.requests += r.requests;
  counts.notModified += r.notModified;
  counts.bytes += r.bytes;
}

/** A copy of the counters that later counting does not change (for `onProgress`). */
export function snapshotProgress(counts: ProgressTally): BatchProgress {
  return { ...counts, statuses: { ...counts.statuses } };
}

/**
 * A run's counters and the one way they move, for every runner and its command line (local batch,
 * queue producer, worker): a site started, ended (with its result, or a runner's own status), or
 * skipped as done before. Each change is handed to `onProgress` as a snapshot; a listener that
 * throws does not break the run.
 */
export class ProgressCounter {
  private readonly counts = emptyProgress();
  constructor(private readonly onProgress?: (progress: BatchProgress) => void) {}

  /** The counters as they are now (a copy). */
  snapshot(): BatchProgress {
    return snapshotProgress(this.counts);
  }

  /** A site's walk started here. */
  started(): void {
    this.counts.sitesActive++;
    this.tell();
  }

  /**
   * A site ended with this result; `walked`: it was counted by `started` (an invalid line or a
   * queue's site was not).
   */
  ended(result: SiteResult, walked = false): void {
    if (walked) this.counts.sitesActive--;
    countSite(this.counts, result);
    this.tell();
  }

  /** A site ended with a runner's own status and no result row (a queue's failed or lost job). */
  endedAs(status: string): void {
    countStatus(this.counts, status);
    this.tell();
  }

  /** A site walked and left uncounted: interrupted, its rows dropped (walked again on resume). */
  dropped(): void {
    this.counts.sitesActive--;
    this.tell();
  }

  /** A site done by an earlier part of a resumed run: not walked, counted as done before. */
  skipped(): void {
    this.counts.sitesSkipped++;
    this.tell();
  }

  /** Sites being walked now, when only the queue knows (a producer's view). */
  active(n: number): void {
    this.counts.sitesActive = n;
    this.tell();
  }

  private tell(): void {
    if (this.onProgress === undefined) return;
    try {
      this.onProgress(snapshotProgress(this.counts));
    } catch {
      // A progress listener must not break a run.
    }
  }
}

/** Statuses in the order a summary lists them; a runner's own words come after, by name. */
const ORDER = ['ok', 'partial', 'unreachable', 'error', 'invalid'];
const rank = (status: string): number => {
  const i = ORDER.indexOf(status);
  return i < 0 ? ORDER.length : i;
};

/**
 * The sites of a run in words, adding up: `22 sites (18 ok, 2 unreachable, 1 invalid, 1 done
 * before, resumed)`: the total is every site counted, ended in this run or before it. Only
 * `statuses` words and "done before" appear; `only` keeps the statuses it names (a progress line
 * shows the ones that are not `ok`).
 */
export function sitesText(p: BatchProgress, only?: (status: string) => boolean): string {
  const parts = Object.entries(p.statuses)
    .filter(([s, n]) => n > 0 && (only === undefined || only(s)))
    .sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0))
    .map(([s, n]) => `${n} ${s}`);
  if (p.sitesSkipped > 0 && only === undefined) parts.push(`${p.sitesSkipped} done before, resumed`);
  const total = p.sitesDone + p.sitesSkipped;
  if (only !== undefined) return parts.join(', ');
  return `${total} ${total === 1 ? 'site' : 'sites'}${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`;
}
