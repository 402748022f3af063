import {
  errorText,
  type Registry,
  type RegistryLoader,
  type TreeOptions,
  type WebClient,
} from '@usp-ts/core';
import { GatedClient } from './gated-client.js';
import { NextState, probeFailedState } from './next-state.js';
import { OutputError } from './output-error.js';
import type { PolitenessGate } from './politeness-gate.js';
import type { SiteResult, SiteStatus } from './rows.js';
import { SitePlan } from './site-plan.js';
import { SiteRows } from './site-rows.js';
import type { SiteSink } from './site-sink.js';
import { walkDocuments } from './site-walk.js';
import type { RunMark, SiteState, StateStore, UnreachableMark } from './state-store.js';
import { DEFAULT_PROBE_TIMEOUT_MS, probeFailureText, probeSite } from './unreachable-probe.js';

export { DEFAULT_SITE_DEADLINE_MS } from './site-walk.js';

/** The walk options a batch applies to every site (the job supplies the rest). */
export type SiteWalkOptions = Omit<
  TreeOptions,
  | 'webClient'
  | 'registry'
  | 'pageStore'
  | 'revisit'
  | 'onDocument'
  | 'conditionalRequest'
  | 'deadlineMs'
  | 'signal'
  | 'onProgress'
>;

/** One site to walk: plain data, so a queue can carry it. */
export interface SiteJob {
  /** The normalised homepage URL (`normalizeSite`). */
  readonly site: string;
  /**
   * Walk as if the state were empty (no validators, no `<lastmod>` skips, every known path probed)
   * and emit every page, each still marked against the state.
   */
  readonly full?: boolean;
}

/** What a site walk runs with: shared by every job of a batch, passed in by the runner. */
export interface SiteJobContext {
  /** The shared HTTP client (one per process). */
  readonly webClient: WebClient;
  /** The formats, or a `RegistryLoader` (called when the site first has a document to parse). */
  readonly registry: Registry | RegistryLoader;
  readonly gate: PolitenessGate;
  readonly sink: SiteSink;
  /** Incremental state; without it every document is fetched and no page is marked. */
  readonly state?: StateStore | null;
  /** The site's wall-clock budget (default 10 minutes). */
  readonly deadlineMs?: number;
  /** A full walk (`SiteJob.full`) when the last one is older than this. Default: never. */
  readonly fullEveryMs?: number;
  /**
   * A site that gave no answer on its previous run (`SiteState.unreachable`) is first probed with
   * one request (robots.txt, no retry) that waits this long at most; it is walked only if that
   * gets an answer. Not on full walks. Default 1,500.
   */
  readonly probeTimeoutMs?: number;
  readonly walkOptions?: SiteWalkOptions;
  /** Aborting stops the walk and drops its rows (a resumed run walks the site again). */
  readonly signal?: AbortSignal;
  /** The clock (tests). */
  readonly now?: () => number;
}

/**
 * Walks one site: robots.txt, known paths and every sitemap below them, through the politeness
 * gate, with the state's validators (a 304 on robots.txt or an index replays its stored children),
 * skipping children whose index `<lastmod>` did not move on sites where it proved honest. Pages go
 * to the sink as they are read, marked against the state; the rows, the result row and the new
 * state are committed together at the end. Never rejects: an unexpected failure is an `error` row.
 * A site that gave no answer last time is first sent one probe (`probeTimeoutMs`) and walked only
 * if it answers.
 *
 * It reads as plan (`SitePlan`: the last state and what to do with it), walk (`walkDocuments`),
 * rows (`SiteRows`) and next state (`NextState`), each in its file. Inputs and outputs are plain
 * data and everything shared is passed in, so a queue worker can call it as it is.
 */
export function walkSite(job: SiteJob, ctx: SiteJobContext): Promise<SiteResult> {
  return walkAndCommit(job, ctx, undefined);
}

/**
 * `walkSite`, calling `committing` with the site's result once its walk is over and its commit
 * sent, before the commit ends: a runner may then start another site while the store works. Not
 * called for the error row of a walk that failed (committed before the promise settles anyway).
 */
export async function walkAndCommit(
  job: SiteJob,
  ctx: SiteJobContext,
  committing: ((result: SiteResult) => void) | undefined,
): Promise<SiteResult> {
  const started = performance.now();
  const output = ctx.sink.begin(job.site);
  const client = new GatedClient(ctx.webClient, ctx.gate);
  const rows = new SiteRows(job.site, output, ctx.state != null);
  const result = (status: SiteStatus, reason: string | null): SiteResult =>
    rows.result(status, reason, client.requests, performance.now() - started);
  let committed = false;
  const commit = async (final: SiteResult, state: SiteState | null): Promise<SiteResult> => {
    const store = ctx.state;
    committed = true;
    const save = store == null || state === null ? undefined : (mark: RunMark) => store.saveSite(state, mark);
    const sent = output.commit(final, save === undefined ? undefined : { saveState: save });
    committing?.(final);
    await sent;
    return final;
  };
  try {
    const plan = await SitePlan.load(job, ctx, ctx.now?.() ?? Date.now());
    if (plan.probeFirst && plan.prev !== null) {
      const prev = plan.prev;
      const probeMs = ctx.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
      const failure = await probeSite(client, job.site, probeMs, ctx.signal);
      if (failure !== null) {
        const reason = probeFailureText(failure, prev.unreachable as UnreachableMark);
        return await commit(result('unreachable', reason), probeFailedState(prev, plan.now, failure));
      }
    }
    const next = plan.state === null ? null : new NextState(plan);
    const tree = await walkDocuments({ plan, rows, next, client }, ctx);
    if (ctx.signal?.aborted) {
      output.discard();
      return result('partial', 'aborted');
    }
    rows.rethrowPageFailure();
    // The walk's own verdict (core's breaker gives up on a dead origin within seconds).
    const { outcome, reason } = tree.summary;
    let state: SiteState | null = null;
    if (next !== null && outcome === 'unreachable') state = next.unreachable(reason);
    else if (next !== null) {
      const walked = await next.walked(tree.summary);
      for (const removed of walked.removed) rows.emit(removed);
      state = walked.state;
    }
    // Counted after the rows of sitemaps no longer listed, so that `pages` is every page row
    // the site wrote and a reader's sums agree with the page rows.
    return await commit(result(outcome, reason), state);
  } catch (error) {
    // An output or state that cannot be written is the run's failure, not the site's.
    if (committed) throw asCommitFailure(error);
    output.discard();
    const failed = result('error', errorText(error));
    if (ctx.signal?.aborted) return result('partial', 'aborted');
    try {
      await output.commit(failed);
    } catch (sinkError) {
      // An output that cannot be written (a full disk) is the run's end, as on the usual path.
      if (sinkError instanceof OutputError) throw sinkError;
    }
    return failed;
  } finally {
    closeIdleConnections(ctx.webClient, client.hosts);
  }
}

/** Errors of a site's commit: its output or its state could not be written. */
const commitFailures = new WeakSet<object>();

function asCommitFailure(error: unknown): unknown {
  const e = typeof error === 'object' && error !== null ? error : new Error(String(error));
  commitFailures.add(e);
  return e;
}

/**
 * Whether `walkSite` rejected because the site could not be committed (its output or state could
 * not be written): the run's end. Any other rejection is an unexpected failure of that site alone.
 */
export function isCommitFailure(error: unknown): boolean {
  return typeof error === 'object' && error !== null && commitFailures.has(error);
}

/** A web client that can close its idle connections to some hosts at once (`@usp-ts/fetcher`'s). */
interface IdleClosing {
  closeIdle(hosts: Iterable<string>): void;
}

/**
 * A site's hosts are rarely visited again by the next sites: their idle connections are closed
 * when the site ends rather than left to the client's keep-alive timeout (on the bench's no-change
 * run of 1,000 sites, about a thousand sockets closed by undici's idle timer, each with an error
 * whose stack trace was formatted). A host another site is walking keeps working: a request
 * finds its connection in use (left open) or opens a new one.
 */
function closeIdleConnections(webClient: WebClient, hosts: ReadonlySet<string>): void {
  if (hosts.size === 0) return;
  const c = webClient as Partial<IdleClosing>;
  if (typeof c.closeIdle === 'function') c.closeIdle(hosts);
}
