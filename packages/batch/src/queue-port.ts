import { hostGate, type PolitenessGate } from './politeness-gate.js';
import type { SiteResult } from './rows.js';
import { type SiteJob, walkSite } from './site-job.js';
import { commitInternalError, isInterrupted, isRunFailure } from './site-results.js';
import { checkSiteRunOptions, type SiteRun, type SiteRunOptions, siteJobContext } from './site-run.js';
import type { SiteSink } from './site-sink.js';
import type { StateStore } from './state-store.js';

// The queue port: what a runner needs from a queue engine, so that the engine is an adapter and
// the runner (the walk, the fencing sink, the error rows, the release of an interrupted site) is
// written once. `@usp-ts/queue-bullmq` is the BullMQ adapter; `memorySiteQueue` is the reference
// adapter, in-process (tests, one machine). A second engine implements `SiteQueue` and runs
// `runSiteQueue` unchanged.
//
// The five things an engine does: enqueue idempotently (`enqueue`), take (`consume` hands each job
// to the runner), renew or confirm (`JobLease.confirm`, the fence before a commit), release (the
// runner's `released` outcome: the job goes back untouched) and report (the `kept` outcome: the
// result reaches whoever waits for the site). The at-least-once bookkeeping (which try's copy is
// kept, which earlier copies it makes void) is the engine's: it hands it to the sink through
// `confirm`, and a sink only applies it (`CommitOptions.fence`).

/**
 * Which copy of a site a commit keeps, when the site is a queue job that may be walked more than
 * once (a worker killed after keeping its rows and before the queue recorded the job as done, and
 * the job walked again elsewhere). Given by the queue (see `CommitOptions.fence`).
 */
export interface SiteCopy {
  /** This copy's name: an id of the try that wrote it, used by no other copy. */
  readonly token: string;
  /**
   * Names of earlier copies of the same site that this one replaces. A sink makes them void: it
   * removes them with this commit (a database), or records the names so that readers and a
   * resumed run drop them (the NDJSON journal's `voids`).
   */
  readonly voids: readonly string[];
}

/** One try of a site job, as the engine hands it to the runner. */
export interface JobLease {
  /** Aborted when the runner stops or the engine takes the job back: end the walk, keep nothing. */
  readonly signal: AbortSignal;
  /**
   * Renews the engine's hold on the job and confirms that this try still owns the site, right
   * before the runner keeps any output: resolves with this try's copy (its name, and the earlier
   * copies of the site it makes void), or rejects when another try owns the site now.
   */
  confirm(): Promise<SiteCopy>;
  /**
   * The run the job belongs to, when the engine keeps runs (a BullMQ queue's run, named by its
   * producer, the same for every worker): a store that keeps rows by run files the site under it
   * (`SiteSink.begin(site, { run })`), so two copies of a site in one run are one.
   */
  readonly run?: string;
}

/** How a try ended for the engine. A try that rejects failed (the engine retries it, or fails the job). */
export type TryOutcome =
  /** Report: the site's rows are kept; the result goes back to whoever waits for the site. */
  | { readonly kept: SiteResult }
  /** Release: nothing was kept; the job goes back to the queue untouched, walked again from the start. */
  | { readonly released: true };

/** The runner's side of a try: the engine calls it for each job it hands out. */
export type SiteWalker = (job: SiteJob, lease: JobLease) => Promise<TryOutcome>;

/** A runner taking jobs from an engine. */
export interface QueueConsumer {
  /** Stops taking jobs; tries in flight are aborted (released). Resolves once it is closed. */
  stop(): Promise<void>;
  readonly closed: Promise<void>;
}

/** A queue engine, as a runner uses it. */
export interface SiteQueue {
  /**
   * Adds one job per site, idempotently: a site already waiting or being walked is not added
   * again. Resolves with the number of jobs added.
   */
  enqueue(jobs: Iterable<SiteJob> | AsyncIterable<SiteJob>): Promise<number>;
  /** Hands jobs to `walk`, `concurrency` at a time, until stopped (or, as the engine offers, idle). */
  consume(walk: SiteWalker, options: { readonly concurrency: number }): QueueConsumer;
}

/**
 * The runner's view of its sink under a queue: a commit first confirms the lease (the fence),
 * keeps the rows tagged with the copy, and only then saves the site's new state. In that order a
 * runner killed at any point leaves either no row of the site (walked again, from the state as it
 * was) or all of them with the old state (the next run sees the same changes again); a copy kept
 * by a try the engine did not record is made void by the next try's `confirm`. A sink that keeps
 * the state in its own transactions (`ownState`, a database) takes the save into the commit:
 * rows and state, both or neither. The rows are filed under the lease's run, when it has one.
 */
function fencedSink(
  sink: SiteSink,
  lease: JobLease,
  runId: string,
  state: StateStore | null,
): SiteSink & { committed: SiteResult | null; refused: { error: unknown } | null } {
  const together = state !== null && sink.ownState === state;
  return {
    /** The result this try kept, once its rows are written. */
    committed: null,
    /** Why the engine refused this try's copy (the lease was lost), once it did. */
    refused: null,
    begin(site) {
      const self = this;
      const output = sink.begin(site, lease.run !== undefined ? { run: lease.run } : undefined);
      return {
        // The line the job made with the state's change marks: not serialised a second time.
        page: (row, json) => output.page(row, json),
        ...(output.pageLine !== undefined ? { pageLine: (json: string) => output.pageLine?.(json) } : {}),
        ...(output.pageLines !== undefined
          ? { pageLines: (text: Buffer, rows: number) => output.pageLines?.(text, rows) }
          : {}),
        sitemap: (row) => output.sitemap(row),
        async commit(result, options) {
          const fence = () =>
            lease.confirm().catch((error: unknown) => {
              self.refused = { error };
              throw error;
            });
          const saveState = options?.saveState;
          if (together && saveState !== undefined) {
            await output.commit(result, { fence, saveState });
            self.committed = result;
            return;
          }
          await output.commit(result, { fence });
          self.committed = result;
          await saveState?.({ runId, site, offsets: {} });
        },
        discard: () => output.discard(),
      };
    },
  };
}

/**
 * The runner's walker over a checked run: each try walks its site with a fenced sink. A bug that
 * escaped the walk is the site's `error` row, as in `batchWalk` (or what the try kept, when it came
 * after the commit); an output or state that cannot be written, a lost lease (the engine refused
 * the copy, whichever row it was keeping) or a stop fails the try; an interrupted walk is released.
 */
export function queueWalker(run: SiteRun, gate: PolitenessGate, runId: string): SiteWalker {
  return async (job, lease) => {
    const sink = fencedSink(run.sink, lease, runId, run.state);
    let result: SiteResult;
    try {
      result = await walkSite(
        job.full === true ? { site: job.site, full: true } : { site: job.site },
        siteJobContext(run, { gate, sink, signal: lease.signal }),
      );
    } catch (error) {
      // A refused copy met in the site's commit comes here as a commit failure (a run failure).
      if (isRunFailure(error) || lease.signal.aborted) throw error;
      result = sink.committed ?? (await commitInternalError(job.site, error, sink));
    }
    // Refused while the site's error row was kept (walkSite's or the one above): that row is not
    // the engine's to record either.
    if (sink.refused !== null) throw sink.refused.error;
    if (isInterrupted(result, lease.signal)) {
      return { released: true };
    }
    return { kept: result };
  };
}

/** Options of `runSiteQueue`: the run's, and the runner's name. */
export interface RunSiteQueueOptions extends SiteRunOptions {
  /** The run id of the marks saved with the state (default `queue`). */
  readonly name?: string;
}

/**
 * Runs the sites of a queue engine's jobs (any `SiteQueue`), `sites` at a time, with the
 * run's gate (default: the in-process `hostGate`). Each try's rows go to the sink fenced by the
 * engine's lease.
 */
export function runSiteQueue(queue: SiteQueue, options: RunSiteQueueOptions): QueueConsumer {
  const run = checkSiteRunOptions(options, { name: true });
  const gate = run.gate ?? hostGate({ perHost: run.perHost, maxCrawlDelayMs: run.maxCrawlDelayMs });
  return queue.consume(queueWalker(run, gate, options.name ?? 'queue'), { concurrency: run.sites });
}
