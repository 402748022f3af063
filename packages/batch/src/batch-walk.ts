import { setMaxListeners } from 'node:events';
import type { StateStore } from '@usp-ts/core';
import {
  errorText,
  InvalidOptionError,
  type Registry,
  type RegistryLoader,
  rejectUnknownOptions,
  StateStoreError,
  type WebClient,
} from '@usp-ts/core';
import type { BatchSink } from './batch-sink.js';
import { OutputError } from './output-error.js';
import { hostGate, type PolitenessGate } from './politeness-gate.js';
import { type BatchProgress, countSite, emptyProgress, snapshotProgress } from './progress.js';
import type { SiteResult } from './rows.js';
import { isCommitFailure, type SiteJobContext, type SiteWalkOptions, walkSite } from './site-job.js';
import { readSiteLines } from './site-list.js';
import { startFirst } from './start-first.js';

export interface BatchWalkOptions {
  /** The shared HTTP client (`createWebClient` of `@usp-ts/fetcher`). Required. */
  readonly webClient: WebClient;
  /**
   * The formats (`createDefaultRegistry()` of `usp`), or a `RegistryLoader` giving them when a
   * site first has a document to parse: a run where every answer is a 304 never loads them. Required.
   */
  readonly registry: Registry | RegistryLoader;
  /** Where rows go. Required. */
  readonly sink: BatchSink;
  /** Incremental state (default: none). */
  readonly state?: StateStore | null;
  /** Site walks at once (default 16). */
  readonly sites?: number;
  /** Requests in flight to one host name (default 2); ignored when `gate` is given. */
  readonly perHost?: number;
  /** Longest robots.txt `Crawl-delay` honoured, in ms (default 10,000); ignored when `gate` is given. */
  readonly maxCrawlDelayMs?: number;
  /** Your own politeness gate (default: `hostGate({ perHost, maxCrawlDelayMs })`). */
  readonly gate?: PolitenessGate;
  /** Each site's wall-clock budget (default 10 minutes). */
  readonly siteDeadlineMs?: number;
  /** A full walk of a site when its last one is older than this (default: never). */
  readonly fullEveryMs?: number;
  /** Walk every site in full this time. */
  readonly full?: boolean;
  /**
   * How long the one probe of a site that gave no answer on its previous run waits, in ms
   * (default 1,500): such a site is walked only if its robots.txt answers that probe.
   */
  readonly probeTimeoutMs?: number;
  /** Options of every site walk (user agent and timeouts belong to the client). */
  readonly walkOptions?: SiteWalkOptions;
  /** Sites already done (a resumed run): neither walked nor reported. */
  readonly isDone?: (site: string) => boolean;
  /** Aborting stops starting sites and interrupts those in flight (their rows are dropped). */
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: BatchProgress) => void;
}

export const DEFAULT_SITES = 16;

const KNOWN = {
  webClient: true,
  registry: true,
  sink: true,
  state: true,
  sites: true,
  perHost: true,
  maxCrawlDelayMs: true,
  gate: true,
  siteDeadlineMs: true,
  fullEveryMs: true,
  full: true,
  probeTimeoutMs: true,
  walkOptions: true,
  isDone: true,
  signal: true,
  onProgress: true,
} satisfies Record<keyof BatchWalkOptions, true>;

/**
 * Walks many sites in one process: `sites` walks at once sharing one client, politeness per host
 * (the gate), a deadline per site. `input` holds one homepage URL an item (the rules of
 * `readSiteLines`: blanks and `#` comments skipped, duplicates walked once, non-URLs reported as
 * `invalid`), read lazily. Sites listed in the state's `unreachableSites()` start before the
 * lines ahead of them, within `START_FIRST_LOOK_AHEAD` lines. Yields each site's result as it
 * ends, in completion order; rows go to the sink. An aborted run yields nothing for the sites it
 * interrupted.
 */
export async function* batchWalk(
  input: AsyncIterable<string> | Iterable<string>,
  options: BatchWalkOptions,
): AsyncGenerator<SiteResult> {
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionError('options', 'must be an object with webClient, registry and sink');
  }
  rejectUnknownOptions(options, KNOWN);
  if (typeof options.webClient?.get !== 'function') throw new InvalidOptionError('webClient', 'is required');
  if (typeof options.registry !== 'function' && typeof options.registry?.xmlFormatFor !== 'function')
    throw new InvalidOptionError('registry', 'is required');
  if (typeof options.sink?.begin !== 'function') throw new InvalidOptionError('sink', 'is required');
  const width = options.sites ?? DEFAULT_SITES;
  if (!Number.isInteger(width) || width < 1) throw new InvalidOptionError('sites', 'must be an integer >= 1');
  const deadline = options.siteDeadlineMs;
  if (deadline !== undefined && !(typeof deadline === 'number' && deadline > 0)) {
    throw new InvalidOptionError('siteDeadlineMs', 'must be a number > 0');
  }
  const fullEvery = options.fullEveryMs;
  if (fullEvery !== undefined && !(typeof fullEvery === 'number' && fullEvery > 0)) {
    throw new InvalidOptionError('fullEveryMs', 'must be a number > 0');
  }
  const probeTimeout = options.probeTimeoutMs;
  if (probeTimeout !== undefined && !(typeof probeTimeout === 'number' && probeTimeout > 0)) {
    throw new InvalidOptionError('probeTimeoutMs', 'must be a number > 0');
  }
  // One listener on the caller's signal, however many walks run: each walk listens to this one.
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  const onAbort = () => stop.abort(options.signal?.reason);
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  const gate =
    options.gate ??
    hostGate({
      ...(options.perHost !== undefined ? { perHost: options.perHost } : {}),
      ...(options.maxCrawlDelayMs !== undefined ? { maxCrawlDelayMs: options.maxCrawlDelayMs } : {}),
    });
  const ctx: SiteJobContext = {
    webClient: options.webClient,
    registry: options.registry,
    gate,
    sink: options.sink,
    state: options.state ?? null,
    ...(deadline !== undefined ? { deadlineMs: deadline } : {}),
    ...(fullEvery !== undefined ? { fullEveryMs: fullEvery } : {}),
    ...(probeTimeout !== undefined ? { probeTimeoutMs: probeTimeout } : {}),
    ...(options.walkOptions !== undefined ? { walkOptions: options.walkOptions } : {}),
    signal: stop.signal,
  };
  const signal = options.signal;
  const counts = emptyProgress();
  const progress = (): void => {
    try {
      options.onProgress?.(snapshotProgress(counts));
    } catch {
      // A progress listener must not break a run.
    }
  };
  // Sites that gave no answer last time start before those near them (their probe waits longest).
  const first = (await ctx.state?.unreachableSites?.()) ?? null;
  const lines = (
    first !== null && first.size > 0 ? startFirst(readSiteLines(input), first) : readSiteLines(input)
  )[Symbol.asyncIterator]();
  const running = new Map<number, Promise<void>>();
  /*
   * Walks report here as they end, in that order (what `Promise.race` over the walks in flight
   * gave, without attaching a reaction to each of them at every end: a long walk collected one
   * per site ended while it ran).
   */
  const ended: ({ id: number; result: SiteResult } | { id: number; site: string; error: unknown })[] = [];
  let wake: (() => void) | null = null;
  const end = (entry: (typeof ended)[number]): void => {
    ended.push(entry);
    wake?.();
    wake = null;
  };
  let nextId = 0;
  let exhausted = false;
  const account = (r: SiteResult): void => countSite(counts, r);
  try {
    for (;;) {
      while (!exhausted && running.size < width && !signal?.aborted) {
        const item = await lines.next();
        if (item.done === true) {
          exhausted = true;
          break;
        }
        const line = item.value;
        if (line.kind === 'invalid') {
          if (options.isDone?.(line.text)) {
            counts.sitesSkipped++;
            progress();
            continue;
          }
          const result: SiteResult = {
            site: line.text,
            status: 'invalid',
            reason: `line ${line.line} is not an http(s) URL`,
            pages: 0,
            sitemaps: 0,
            requests: 0,
            notModified: 0,
            skipped: 0,
            bytes: 0,
            ms: 0,
          };
          await options.sink.begin(line.text).commit(result);
          account(result);
          progress();
          yield result;
          continue;
        }
        if (options.isDone?.(line.site)) {
          counts.sitesSkipped++;
          progress();
          continue;
        }
        const id = nextId++;
        counts.sitesActive++;
        running.set(
          id,
          walkSite({ site: line.site, ...(options.full === true ? { full: true } : {}) }, ctx).then(
            (result) => end({ id, result }),
            (error: unknown) => end({ id, site: line.site, error }),
          ),
        );
        progress();
      }
      if (running.size === 0) break;
      if (ended.length === 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
      const next = ended.shift() as (typeof ended)[number];
      running.delete(next.id);
      counts.sitesActive--;
      const result = 'error' in next ? await internalError(next.site, next.error, options.sink) : next.result;
      // An interrupted site was not committed: it is neither reported nor counted.
      if (signal?.aborted && result.status === 'partial' && result.reason === 'aborted') continue;
      account(result);
      progress();
      yield result;
    }
  } catch (error) {
    // The run cannot go on (its output or state failed): the walks in flight stop now rather than
    // at their deadlines, and nothing more is committed.
    stop.abort(error);
    throw error;
  } finally {
    // A consumer that leaves early, or a failure, still waits for the walks in flight to settle.
    await Promise.allSettled(running.values());
    await lines.return?.(undefined);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/** The run cannot go on: its output or its state failed. */
function isRunFailure(error: unknown): boolean {
  return error instanceof OutputError || error instanceof StateStoreError || isCommitFailure(error);
}

/**
 * A site's job that failed in an unexpected way (a bug, here or in a plugin, a sink or a store):
 * the site becomes an `error` row with the message and the run goes on with the others. An
 * output or state that cannot be written is the run's end instead, as is an error row that
 * cannot be written.
 */
async function internalError(site: string, error: unknown, sink: BatchSink): Promise<SiteResult> {
  if (isRunFailure(error)) throw error;
  const result: SiteResult = {
    site,
    status: 'error',
    reason: `internal error: ${errorText(error)}`,
    pages: 0,
    sitemaps: 0,
    requests: 0,
    notModified: 0,
    skipped: 0,
    bytes: 0,
    ms: 0,
  };
  try {
    await sink.begin(site).commit(result);
  } catch (sinkError) {
    if (isRunFailure(sinkError)) throw sinkError;
    // The sink fails for this site even to take its error row: the run still reports it.
  }
  return result;
}
