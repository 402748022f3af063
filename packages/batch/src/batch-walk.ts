import { setMaxListeners } from 'node:events';
import { hostGate } from './politeness-gate.js';
import { type BatchProgress, ProgressCounter } from './progress.js';
import { readAhead } from './read-ahead.js';
import type { SiteResult } from './rows.js';
import { type SiteJobContext, walkAndCommit } from './site-job.js';
import { readSiteLines, type SiteLine } from './site-list.js';
import { commitInternalError, isInterrupted, unwalkedResult } from './site-results.js';
import { checkSiteRunOptions, type SiteRun, type SiteRunOptions, siteJobContext } from './site-run.js';
import { startFirst } from './start-first.js';

/** Options of `batchWalk`: the run's (`SiteRunOptions`) and the local runner's own. */
export interface BatchWalkOptions extends SiteRunOptions {
  /** Walk every site in full this time. */
  readonly full?: boolean;
  /**
   * Sites already done (a resumed run): neither walked nor reported. Default: those of the sink's
   * `done` (a sink opened to resume a run).
   */
  readonly isDone?: (site: string) => boolean;
  /** Aborting stops starting sites and interrupts those in flight (their rows are dropped). */
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: BatchProgress) => void;
}

const BATCH_WALK_KEYS = {
  full: true,
  isDone: true,
  signal: true,
  onProgress: true,
} as const satisfies Record<Exclude<keyof BatchWalkOptions, keyof SiteRunOptions>, true>;

/**
 * A site whose commit holds at most this many page rows gives its place to the next site while
 * the commit is in flight (on a run where little changed, nearly every site); one with more keeps
 * it, so that the rows held by commits waiting for their store stay small.
 */
const OVERLAP_MAX_PAGES = 1000;

/** How a walk of the run ended, in the order walks end. */
type Ended = { id: number; result: SiteResult } | { id: number; site: string; error: unknown };

/**
 * Walks many sites in one process: `sites` walks at once sharing one client, politeness per host
 * (the gate), a deadline per site. `input` holds one homepage URL an item (the rules of
 * `readSiteLines`: blanks and `#` comments skipped, duplicates walked once, non-URLs reported as
 * `invalid`), read lazily. Sites listed in the state's `unreachableSites()` start before the
 * lines ahead of them, within `START_FIRST_LOOK_AHEAD` lines. A site whose walk is over and whose
 * commit (few page rows) waits for the sink gives its place to the next site: up to `sites` such
 * commits at once. Yields each site's result once its commit ended, in that order; rows go to the
 * sink. The run ends when every commit has. An aborted run yields nothing for the sites it
 * interrupted.
 */
export async function* batchWalk(
  input: AsyncIterable<string> | Iterable<string>,
  options: BatchWalkOptions,
): AsyncGenerator<SiteResult> {
  const run = checkSiteRunOptions(options, BATCH_WALK_KEYS);
  // One listener on the caller's signal, however many walks run: each walk listens to this one.
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  const onAbort = () => stop.abort(options.signal?.reason);
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  const gate = run.gate ?? hostGate({ perHost: run.perHost, maxCrawlDelayMs: run.maxCrawlDelayMs });
  const ctx = siteJobContext(run, { gate, sink: run.sink, signal: stop.signal });
  // Sites that gave no answer last time start before those near them (their probe waits longest).
  const first = (await run.state?.unreachableSites?.()) ?? null;
  const listed =
    first !== null && first.size > 0 ? startFirst(readSiteLines(input), first) : readSiteLines(input);
  const pool = new WalkPool(run, ctx, options, stop);
  // A store that reads several sites' states at once is told the next `sites` lines' sites.
  const willLoad = run.state?.willLoad?.bind(run.state);
  const lines =
    willLoad === undefined
      ? listed
      : readAhead(listed, run.sites, { willLoad }, (site) => !pool.isDone(site));
  try {
    yield* pool.results(lines[Symbol.asyncIterator]());
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/** The walks of one `batchWalk`: up to `sites` at once, their results in the order they end. */
class WalkPool {
  private readonly running = new Map<number, Promise<void>>();
  /** Sites of `running` whose walk is over and whose commit is in flight, their place given up. */
  private readonly committing = new Set<number>();
  /*
   * Walks report here as they end, in that order (what `Promise.race` over the walks in flight
   * gave, without attaching a reaction to each of them at every end: a long walk collected one
   * per site ended while it ran).
   */
  private readonly ended: Ended[] = [];
  private wake: (() => void) | null = null;
  private nextId = 0;
  private readonly progress: ProgressCounter;

  constructor(
    private readonly run: SiteRun,
    private readonly ctx: SiteJobContext,
    private readonly options: BatchWalkOptions,
    private readonly stop: AbortController,
  ) {
    this.progress = new ProgressCounter(options.onProgress);
  }

  async *results(lines: AsyncIterator<SiteLine>): AsyncGenerator<SiteResult> {
    const signal = this.options.signal;
    let exhausted = false;
    try {
      for (;;) {
        while (!exhausted && this.running.size - this.committing.size < this.run.sites && !signal?.aborted) {
          const item = await lines.next();
          if (item.done === true) {
            exhausted = true;
            break;
          }
          const invalid = await this.start(item.value);
          if (invalid !== null) yield invalid;
        }
        if (this.running.size === 0) break;
        if (this.ended.length === 0) {
          await new Promise<void>((resolve) => {
            this.wake = resolve;
          });
          // A walk ended, or a commit gave up its place: start sites first, then report.
          continue;
        }
        const next = this.ended.shift() as Ended;
        this.running.delete(next.id);
        this.committing.delete(next.id);
        const result =
          'error' in next ? await commitInternalError(next.site, next.error, this.run.sink) : next.result;
        if (isInterrupted(result, signal)) {
          this.progress.dropped();
          continue;
        }
        this.progress.ended(result, true);
        yield result;
      }
    } catch (error) {
      // The run cannot go on (its output or state failed): the walks in flight stop now rather
      // than at their deadlines, and nothing more is committed.
      this.stop.abort(error);
      throw error;
    } finally {
      // A consumer that leaves early, or a failure, still waits for the walks in flight to settle.
      await Promise.allSettled(this.running.values());
      await lines.return?.(undefined);
    }
  }

  /** Starts the walk of a line's site; an invalid line is committed and returned as its result. */
  private async start(line: SiteLine): Promise<SiteResult | null> {
    const site = line.kind === 'invalid' ? line.text : line.site;
    if (this.isDone(site)) {
      this.progress.skipped();
      return null;
    }
    if (line.kind === 'invalid') {
      const result = unwalkedResult(site, 'invalid', `line ${line.line} is not an http(s) URL`);
      await this.run.sink.begin(site).commit(result);
      this.progress.ended(result);
      return result;
    }
    const id = this.nextId++;
    const job = this.options.full === true ? { site, full: true } : { site };
    this.running.set(
      id,
      walkAndCommit(job, this.ctx, (result) => this.committed(id, result)).then(
        (result) => this.end({ id, result }),
        (error: unknown) => this.end({ id, site, error }),
      ),
    );
    this.progress.started();
    return null;
  }

  /** A site of a resumed run that is not walked again. */
  isDone(site: string): boolean {
    return this.options.isDone !== undefined
      ? this.options.isDone(site)
      : this.run.sink.done?.has(site) === true;
  }

  /** A site's commit was sent: a small one gives its place to the next site, `sites` at most. */
  private committed(id: number, result: SiteResult): void {
    if (result.pages > OVERLAP_MAX_PAGES || this.committing.size >= this.run.sites) return;
    this.committing.add(id);
    this.wakeUp();
  }

  private end(entry: Ended): void {
    this.ended.push(entry);
    this.wakeUp();
  }

  private wakeUp(): void {
    this.wake?.();
    this.wake = null;
  }
}
