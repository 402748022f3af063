import type { ChildRef } from '../contract/model.js';
import type { Registry } from '../contract/registry.js';
import { AbstractIndexSitemap, InvalidSitemap, type Sitemap } from '../contract/sitemap.js';
import type { SitemapDate } from '../contract/sitemap-date.js';
import type { StopReason, WalkSummary } from '../contract/walk-summary.js';
import type { Warning, WarningCode } from '../contract/warning.js';
import type { WebResponse } from '../contract/web-client.js';
import type { WalkConfig } from './config.js';
import { OutcomeTally, stopText } from './outcome.js';
import { type ReuseKind, replayedNode, type StoredDocument } from './revisit.js';
import { offSiteReason } from './same-site.js';
import { skippedTask } from './skipped.js';
import { Slots } from './slots.js';
import { type FetchResult, type FetchTask, hook, type PageSink } from './task.js';
import { TreeOrder } from './tree-order.js';
import type { WalkStats } from './walk-stats.js';

/**
 * What the steps of one walk share (fetch one, parse, children): its configuration, its budgets
 * and counters, how it stops, and how it reports a sitemap it could not read. `Walk` adds the
 * per-sitemap sequence on top; the steps see this class only, so they cannot reach each other.
 */
export abstract class WalkState {
  readonly config: WalkConfig;
  /** Warnings about the walk as a whole (limits hit); the tree puts them on its root. */
  readonly walkWarnings: Warning[] = [];
  readonly sink: PageSink | null;
  /** The concurrency limit: a fetch holds a slot from its request to the end of its parse. */
  protected readonly slots: Slots;
  readonly #controller = new AbortController();
  #stopReason: StopReason | null = null;
  #halted = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #unlinkSignal: (() => void) | undefined;
  /** Set by a caller's callback that threw where usp lets the exception escape. */
  #fatal: { error: unknown } | null = null;
  /** Requests started (counts against `maxSitemaps`). */
  fetched = 0;
  done = 0;
  invalid = 0;
  inFlight = 0;
  /** Pages accepted (counts against `maxPages`). */
  pages = 0;
  bytes = 0;
  readonly #outcome = new OutcomeTally();
  /**
   * Every sitemap this walk fetched or is fetching (requested and final URLs, by `urlKey`), with
   * who named it first. usp de-duplicates only ancestors, so an index listing a leaf twice (or in
   * N query-string spellings that redirect to one URL) fetched and emitted it N times.
   */
  readonly #claimed = new Map<string, string>();
  /** A `RegistryLoader`'s promise, taken at this walk's first parse. */
  #loadedRegistry: Promise<Registry> | null = null;
  /** Reports the tree's nodes in order (`onTreeNode`); `null` without that hook. */
  readonly treeOrder: TreeOrder | null;

  constructor(config: WalkConfig, sink: PageSink | null) {
    this.config = config;
    this.sink = sink;
    this.slots = new Slots(config.concurrency);
    const onTreeNode = config.hooks.onTreeNode;
    this.treeOrder = onTreeNode === undefined ? null : new TreeOrder(onTreeNode);
  }

  /** Fetches, parses and (for an index) recurses. Never rejects for bad content or bad servers. */
  abstract fetch(task: FetchTask): Promise<FetchResult>;

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get stopReason(): StopReason | null {
    return this.#stopReason;
  }

  get stats(): WalkStats {
    return {
      sitemapsQueued: this.slots.waiting,
      sitemapsInFlight: this.inFlight,
      sitemapsFetched: this.fetched,
      sitemapsDone: this.done,
      sitemapsInvalid: this.invalid,
      pages: this.pages,
      bytes: this.bytes,
      stoppedBy: this.#stopReason,
    };
  }

  /** How the walk ended (see `WalkSummary`). */
  get summary(): WalkSummary {
    return this.#outcome.summary(this.#stopReason, this.config);
  }

  start(): void {
    const { signal, deadlineMs } = this.config;
    if (signal !== null) {
      if (signal.aborted) this.stop('aborted');
      else {
        const onAbort = () => this.stop('aborted');
        // A signal aborts once, and `finish` removes the listener: no `{ once: true }`, which
        // costs Node's EventTarget about three times as much (one per site of a batch).
        signal.addEventListener('abort', onAbort);
        this.#unlinkSignal = () => signal.removeEventListener('abort', onAbort);
      }
    }
    if (deadlineMs !== null) {
      this.#timer = setTimeout(() => this.stop('deadline'), deadlineMs);
    }
  }

  /** Releases the timer and the listener on the caller's signal (no leak once the walk is over). */
  finish(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#unlinkSignal?.();
    this.#unlinkSignal = undefined;
    this.progress();
  }

  /**
   * Stops the walk: queued and later sitemaps are not fetched. In-flight requests are aborted
   * (their documents end as truncated with the pages read so far), except when the sitemap budget
   * ran out: those were within it and finish. `null` stops silently (a stream consumer that went
   * away).
   */
  stop(reason: StopReason | null): void {
    const first = !this.#halted;
    const aborting = reason !== 'maxSitemaps' && !this.#controller.signal.aborted;
    if (!first && !aborting) return;
    this.#halted = true;
    if (first && reason !== null) this.#stopReason = reason;
    if (reason !== null) {
      const code: WarningCode = reason === 'aborted' ? 'aborted' : 'limit';
      const message = `Walk stopped: ${stopText(reason, this.config)}; sitemaps not fetched are reported as InvalidSitemap`;
      this.warn(this.walkWarnings, code, message, this.config.homepageUrl);
    }
    this.slots.drain();
    if (aborting) this.#controller.abort();
  }

  /** Whether the walk stopped taking new sitemaps. */
  get halted(): boolean {
    return this.#halted;
  }

  /** Rejects the walk with a caller's exception (usp lets `recurse_list_callback` errors escape). */
  fail(error: unknown): void {
    if (this.#fatal === null) this.#fatal = { error };
    this.stop(null);
  }

  get fatal(): { error: unknown } | null {
    return this.#fatal;
  }

  /** A warning for the caller's listener, kept in `into` too when given. */
  warn(into: Warning[] | null, code: WarningCode, message: string, url: string): Warning {
    const w: Warning = { code, message, url };
    into?.push(w);
    this.notify(w);
    return w;
  }

  /** Hands a warning to the caller's listener; a listener that throws does not break the walk. */
  notify(w: Warning): void {
    hook(() => this.config.hooks.onWarning?.(w));
  }

  progress(): void {
    const onProgress = this.config.hooks.onProgress;
    if (onProgress !== undefined) hook(() => onProgress(this.stats));
  }

  invalidNode(
    url: string,
    reason: string,
    lastModified: SitemapDate | null,
    code: WarningCode | null,
  ): Sitemap {
    const warnings: Warning[] = [];
    if (code !== null) this.warn(warnings, code, reason, url);
    this.invalid++;
    return new InvalidSitemap({ url, reason, lastModified, warnings });
  }

  /** A sitemap the walk did not request: done at once, as an `InvalidSitemap` saying why. */
  notRequested(task: FetchTask, reason: string, code: WarningCode | null): FetchResult {
    this.done++;
    return {
      node: this.invalidNode(task.url, reason, task.lastModified, code),
      requestedUrl: task.url,
      contentType: null,
      unfetched: true,
    };
  }

  unfetched(task: FetchTask): FetchResult {
    const why = this.#stopReason === null ? 'the walk stopped' : stopText(this.#stopReason, this.config);
    const result = this.notRequested(task, `Un-fetched child sitemap: ${why}`, null);
    return skippedTask(this.config.hooks, task, 'stopped', result);
  }

  result(task: FetchTask, node: Sitemap, contentType: string | null): FetchResult {
    return { node, requestedUrl: task.url, contentType, unfetched: false };
  }

  /** The stored copy's node, as the result of `task`, and its stored children. */
  replayed(task: FetchTask, doc: StoredDocument, reused: ReuseKind): [FetchResult, ChildRef[]] {
    const node = replayedNode(task.url, doc, task.lastModified);
    // Written out, not `{ ...this.result(…), reused }`: V8 gives every object made by such a
    // spread a map of its own, and each later read of it goes to the runtime (one a 304 of a batch).
    const result: FetchResult = { node, requestedUrl: task.url, contentType: null, unfetched: false, reused };
    return [result, node instanceof AbstractIndexSitemap ? [...doc.children] : []];
  }

  /** Records that `task` fetches `key`; returns who named it first when it was already claimed. */
  claim(key: string, task: FetchTask): string | null {
    const first = this.#claimed.get(key);
    if (first !== undefined) return first;
    this.#claimed.set(key, task.parentUrl ?? this.config.homepageUrl);
    return null;
  }

  /** A sitemap fetched already in this walk: a reference to the first, not a second fetch. */
  repeated(task: FetchTask, sameAs: string, firstParent: string): FetchResult {
    return this.notRequested(task, repeatText(task.url, sameAs, firstParent), 'duplicate-sitemap');
  }

  /** The formats; a `RegistryLoader` is called at the walk's first parse, and only then. */
  registry(): Registry | Promise<Registry> {
    const registry = this.config.registry;
    if (typeof registry !== 'function') return registry;
    this.#loadedRegistry ??= registry();
    return this.#loadedRegistry;
  }

  /** Counts the answer for the walk's outcome and tells the breaker. */
  record(url: string, response: WebResponse): void {
    this.#outcome.record(url, response);
    if (this.config.breaker?.record(url, response) === true) {
      const reason = this.config.breaker.refusal(url) ?? '';
      this.warn(
        this.walkWarnings,
        'unreachable',
        `Giving up on ${originOf(url)} for the rest of the walk (${reason}); its other sitemaps are not fetched`,
        url,
      );
    }
  }

  /** Why the walk's host policy refuses `url`, or `null` when it may be fetched. */
  offSite(url: string): string | null {
    return this.config.hostPolicy === 'same-site' ? offSiteReason(url, this.config.homepageUrl) : null;
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** Why a sitemap the walk has already is not fetched again. */
export function repeatText(url: string, sameAs: string, firstParent: string): string {
  const also = sameAs === url ? '' : ` (as ${sameAs})`;
  return `Sitemap ${url} was fetched already in this walk${also}, first listed by ${firstParent}; not fetched again`;
}
