import { errorText } from '../contract/errors.js';
import type { ChildRef, Page } from '../contract/model.js';
import { type ParsedDocument, sitemapFromDocument } from '../contract/parsed-document.js';
import type { Registry } from '../contract/registry.js';
import {
  AbstractIndexSitemap,
  InvalidSitemap,
  type PagesSitemapType,
  type Sitemap,
} from '../contract/sitemap.js';
import type { SitemapDate } from '../contract/sitemap-date.js';
import type { StopReason, WalkSummary } from '../contract/walk-summary.js';
import type { Warning, WarningCode } from '../contract/warning.js';
import type { WebRequestOptions, WebResponse } from '../contract/web-client.js';
import type { ParseDocumentOptions } from '../engine/document.js';
import { type Ancestry, safeKey, setRepr } from './ancestry.js';
import type { WalkConfig } from './config.js';
import { OutcomeTally, stopText } from './outcome.js';
import type { WalkedSitemapInfo } from './page-walk.js';
import { childAncestry, childRefusal, keptChildren } from './recursion.js';
import { type ReuseKind, replayedNode, type StoredDocument } from './revisit.js';
import { loadPublicSuffixList, offSiteReason } from './same-site.js';
import { Slots } from './slots.js';
import { TreeOrder, TreePlace } from './tree-order.js';
import type { WalkStats } from './walk-stats.js';

/** Receives each batch of pages as a document is parsed; awaiting it pauses that document. */
export type PageSink = (pages: Page[], sitemap: WalkedSitemapInfo) => void | Promise<void>;

export interface FetchTask {
  readonly url: string;
  /** usp's recursion level: robots.txt and known paths are 0. */
  readonly level: number;
  readonly ancestry: Ancestry;
  readonly lastModified: SitemapDate | null;
  /** Top-level probes (robots.txt, known paths) report no `fetch` warning for a 404. */
  readonly quiet404?: boolean;
  /** The index that listed it (absent at the top level). */
  readonly parentUrl?: string;
  /** Where its node will stand in the tree, for `onTreeNode` (absent without that hook). */
  readonly place?: TreePlace;
}

export interface FetchResult {
  readonly node: Sitemap;
  /** The URL actually requested (the node URL is the final one). */
  readonly requestedUrl: string;
  /** Response Content-Type, when there was a response. */
  readonly contentType: string | null;
  /** The request was never made (walk stopped first). */
  readonly unfetched: boolean;
  /** The node stands for a stored document (`TreeOptions.revisit`). */
  readonly reused?: ReuseKind;
}

/**
 * One walk: fetches sitemaps through the web client within the concurrency limit and the
 * budgets, parses them, and recurses into index children with usp's rules. The tree shape is
 * assembled by the callers in document order, whatever order the fetches complete in.
 */
export class Walk {
  readonly config: WalkConfig;
  /** Warnings about the walk as a whole (limits hit); the tree puts them on its root. */
  readonly walkWarnings: Warning[] = [];
  readonly #sink: PageSink | null;
  readonly #slots: Slots;
  readonly #controller = new AbortController();
  #stopReason: StopReason | null = null;
  #halted = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #unlinkSignal: (() => void) | undefined;
  /** Set by a caller's callback that threw where usp lets the exception escape. */
  #fatal: { error: unknown } | null = null;
  #fetched = 0;
  #done = 0;
  #invalid = 0;
  #inFlight = 0;
  #pages = 0;
  #bytes = 0;
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
    this.#sink = sink;
    this.#slots = new Slots(config.concurrency);
    const onTreeNode = config.hooks.onTreeNode;
    this.treeOrder = onTreeNode === undefined ? null : new TreeOrder(onTreeNode);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get stopReason(): StopReason | null {
    return this.#stopReason;
  }

  get stats(): WalkStats {
    return {
      sitemapsQueued: this.#slots.waiting,
      sitemapsInFlight: this.#inFlight,
      sitemapsFetched: this.#fetched,
      sitemapsDone: this.#done,
      sitemapsInvalid: this.#invalid,
      pages: this.#pages,
      bytes: this.#bytes,
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
    this.#progress();
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
      this.#warn(this.walkWarnings, code, message, this.config.homepageUrl);
    }
    this.#slots.drain();
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

  #warn(into: Warning[] | null, code: WarningCode, message: string, url: string): Warning {
    const w: Warning = { code, message, url };
    into?.push(w);
    this.notify(w);
    return w;
  }

  /** Hands a warning to the caller's listener; a listener that throws does not break the walk. */
  notify(w: Warning): void {
    hook(() => this.config.hooks.onWarning?.(w));
  }

  #progress(): void {
    const onProgress = this.config.hooks.onProgress;
    if (onProgress !== undefined) hook(() => onProgress(this.stats));
  }

  #invalidNode(
    url: string,
    reason: string,
    lastModified: SitemapDate | null,
    code: WarningCode | null,
  ): Sitemap {
    const warnings: Warning[] = [];
    if (code !== null) this.#warn(warnings, code, reason, url);
    this.#invalid++;
    return new InvalidSitemap({ url, reason, lastModified, warnings });
  }

  /** A sitemap the walk did not request: done at once, as an `InvalidSitemap` saying why. */
  #notRequested(task: FetchTask, reason: string, code: WarningCode | null): FetchResult {
    this.#done++;
    return {
      node: this.#invalidNode(task.url, reason, task.lastModified, code),
      requestedUrl: task.url,
      contentType: null,
      unfetched: true,
    };
  }

  #unfetched(task: FetchTask): FetchResult {
    const why = this.#stopReason === null ? 'the walk stopped' : stopText(this.#stopReason, this.config);
    return this.#notRequested(task, `Un-fetched child sitemap: ${why}`, null);
  }

  /** Fetches, parses and (for an index) recurses. Never rejects for bad content or bad servers. */
  async fetch(task: FetchTask): Promise<FetchResult> {
    const place = task.place;
    if (place === undefined) return this.#fetchTask(task);
    let node: Sitemap | null = null;
    try {
      const result = await this.#fetchTask(task);
      node = result.node;
      return result;
    } finally {
      // Settled here when the walk never reached its node's children (unfetched, failed, a leaf).
      place.built(node);
      place.listed([]);
    }
  }

  async #fetchTask(task: FetchTask): Promise<FetchResult> {
    // Claimed before any await, so sitemaps named at once are claimed in the order named.
    const repeat = this.#claim(safeKey(task.url), task);
    if (repeat !== null) return this.#repeated(task, task.url, repeat);
    if (this.config.hostPolicy === 'same-site') await loadPublicSuffixList();
    if (this.#halted) return this.#unfetched(task);
    const plan = hook(() => this.config.hooks.revisit?.plan(task.url, task.lastModified));
    if (plan?.reuse !== undefined) return this.#replay(task, plan.reuse, 'skipped');
    const got = this.#slots.acquire();
    if (!(got === true || (await got))) return this.#unfetched(task);
    if (this.#halted) {
      this.#slots.release();
      return this.#unfetched(task);
    }
    const refusal = this.config.breaker?.refusal(task.url) ?? null;
    if (refusal !== null) {
      // The origin was given up earlier in this walk: no request, and no warning per document
      // (the breaker's one warning said so when it opened).
      this.#slots.release();
      return this.#notRequested(task, `Unable to fetch sitemap from ${task.url}: ${refusal}`, null);
    }
    if (this.#fetched >= this.config.maxSitemaps) {
      this.#slots.release();
      this.stop('maxSitemaps');
      return this.#unfetched(task);
    }
    this.#fetched++;
    this.#inFlight++;
    let result: FetchResult;
    let children: ChildRef[] = [];
    try {
      [result, children] = await this.#fetchOne(task, plan);
    } catch (error) {
      // A custom client or parse hook that broke its contract: the sitemap is lost, the walk goes on.
      const node = this.#invalidNode(
        task.url,
        `Unable to fetch sitemap from ${task.url}: ${errorText(error)}`,
        task.lastModified,
        'fetch',
      );
      result = this.#result(task, node, null);
    } finally {
      this.#inFlight--;
      this.#slots.release();
    }
    return this.#descend(task, result, children);
  }

  /** Reports the document, then (for an index) fetches its children. */
  async #descend(task: FetchTask, result: FetchResult, children: ChildRef[]): Promise<FetchResult> {
    task.place?.built(result.node);
    const onDocument = this.config.hooks.onDocument;
    if (onDocument !== undefined) {
      hook(() =>
        onDocument({
          requestedUrl: result.requestedUrl,
          node: result.node,
          parentUrl: task.parentUrl ?? null,
          level: task.level,
          children,
          reused: result.reused ?? null,
        }),
      );
    }
    // Children are fetched after the slot is given back: a parent never holds a slot while it waits.
    if (result.node instanceof AbstractIndexSitemap && children.length > 0) {
      await this.#fetchChildren(result.node, task, result.requestedUrl, children);
    }
    this.#done++;
    this.#progress();
    return result;
  }

  /** A document not requested: the stored copy stands for it, and its stored children are walked. */
  #replay(task: FetchTask, doc: StoredDocument, reused: ReuseKind): Promise<FetchResult> {
    const [result, children] = this.#replayed(task, doc, reused);
    return this.#descend(task, result, children);
  }

  /** The stored copy's node, as the result of `task`, and its stored children. */
  #replayed(task: FetchTask, doc: StoredDocument, reused: ReuseKind): [FetchResult, ChildRef[]] {
    const node = replayedNode(task.url, doc, task.lastModified);
    // Written out, not `{ ...this.#result(…), reused }`: V8 gives every object made by such a
    // spread a map of its own, and each later read of it goes to the runtime (one a 304 of a batch).
    const result: FetchResult = { node, requestedUrl: task.url, contentType: null, unfetched: false, reused };
    return [result, node instanceof AbstractIndexSitemap ? [...doc.children] : []];
  }

  async #fetchOne(task: FetchTask, plan: RevisitPlanLike | undefined): Promise<[FetchResult, ChildRef[]]> {
    const { url, lastModified } = task;
    const { hooks, headers, breaker } = this.config;
    const conditional = plan ?? hook(() => hooks.conditionalRequest?.(url));
    let response: WebResponse;
    try {
      // Assigned, not spread in: a conditional spread costs a copy and a throwaway object each.
      const request: { -readonly [K in keyof WebRequestOptions]: WebRequestOptions[K] } = {
        signal: this.signal,
      };
      if (breaker !== null) request.shouldRetry = () => breaker.mayRetry(url);
      if (headers !== undefined) request.headers = headers;
      if (conditional?.ifNoneMatch !== undefined) request.ifNoneMatch = conditional.ifNoneMatch;
      if (conditional?.ifModifiedSince !== undefined) request.ifModifiedSince = conditional.ifModifiedSince;
      response = await this.config.webClient.get(url, request);
    } catch (error) {
      // The client rejects only on abort; anything else from a custom client is reported the same way.
      const message = this.signal.aborted
        ? stopText(this.#stopReason ?? 'aborted', this.config)
        : errorText(error);
      return [this.#result(task, this.#fetchFailed(url, message, lastModified, false), null), []];
    }
    this.#record(url, response);
    if (response.kind === 'error') {
      const quiet = task.quiet404 === true && (response.status === 404 || response.status === 410);
      return [this.#result(task, this.#fetchFailed(url, response.message, lastModified, quiet), null), []];
    }
    if (response.kind === 'not-modified') {
      const stored = hook(() => hooks.revisit?.notModified(url));
      if (stored !== undefined) return this.#replayed(task, stored, 'not-modified');
      const node = this.#invalidNode(
        url,
        `Not modified since the last crawl: ${url}`,
        lastModified,
        'not-modified',
      );
      return [this.#result(task, node, null), []];
    }
    hook(() =>
      hooks.onResponse?.({ url, finalUrl: response.url, status: response.status, headers: response.headers }),
    );
    const contentType = response.headers('content-type');
    const finalUrl = response.url;
    const finalKey = safeKey(finalUrl);
    if (finalKey !== safeKey(url) && task.ancestry.keys.has(finalKey)) {
      response.cancel();
      const reason = `Recursion detected when ${url} redirected to ${finalUrl} with parent URLs ${setRepr(task.ancestry.urls)}.`;
      return [this.#result(task, this.#invalidNode(url, reason, lastModified, 'recursion'), contentType), []];
    }
    if (finalKey !== safeKey(url)) {
      // A redirect onto a sitemap this walk fetched (or is fetching) already.
      const first = this.#claim(finalKey, task);
      if (first !== null) {
        response.cancel();
        return [{ ...this.#repeated(task, finalUrl, first), contentType, unfetched: false }, []];
      }
    }
    const offSite = this.#offSite(finalUrl);
    if (offSite !== null) {
      response.cancel();
      const reason = `Unable to fetch sitemap from ${url}: redirected to ${finalUrl}, ${offSite}`;
      return [this.#result(task, this.#invalidNode(url, reason, lastModified, 'blocked'), contentType), []];
    }
    return this.#parse(task, response.url, response, contentType);
  }

  /** Records that `task` fetches `key`; returns who named it first when it was already claimed. */
  #claim(key: string, task: FetchTask): string | null {
    const first = this.#claimed.get(key);
    if (first !== undefined) return first;
    this.#claimed.set(key, task.parentUrl ?? this.config.homepageUrl);
    return null;
  }

  /** A sitemap fetched already in this walk: a reference to the first, not a second fetch. */
  #repeated(task: FetchTask, sameAs: string, firstParent: string): FetchResult {
    const also = sameAs === task.url ? '' : ` (as ${sameAs})`;
    const reason = `Sitemap ${task.url} was fetched already in this walk${also}, first listed by ${firstParent}; not fetched again`;
    return this.#notRequested(task, reason, 'duplicate-sitemap');
  }

  /** The formats; a `RegistryLoader` is called at the walk's first parse, and only then. */
  #registry(): Registry | Promise<Registry> {
    const registry = this.config.registry;
    if (typeof registry !== 'function') return registry;
    this.#loadedRegistry ??= registry();
    return this.#loadedRegistry;
  }

  /** Counts the answer for the walk's outcome and tells the breaker. */
  #record(url: string, response: WebResponse): void {
    this.#outcome.record(url, response);
    if (this.config.breaker?.record(url, response) === true) {
      const reason = this.config.breaker.refusal(url) ?? '';
      this.#warn(
        this.walkWarnings,
        'unreachable',
        `Giving up on ${originOf(url)} for the rest of the walk (${reason}); its other sitemaps are not fetched`,
        url,
      );
    }
  }

  #fetchFailed(url: string, message: string, lastModified: SitemapDate | null, quiet: boolean): Sitemap {
    return this.#invalidNode(
      url,
      `Unable to fetch sitemap from ${url}: ${message}`,
      lastModified,
      quiet ? null : 'fetch',
    );
  }

  #result(task: FetchTask, node: Sitemap, contentType: string | null): FetchResult {
    return { node, requestedUrl: task.url, contentType, unfetched: false };
  }

  async #parse(
    task: FetchTask,
    finalUrl: string,
    response: Extract<WebResponse, { kind: 'ok' }>,
    contentType: string | null,
  ): Promise<[FetchResult, ChildRef[]]> {
    const { hooks, documentLimits, gunzip } = this.config;
    const writer = this.config.pageStore.open(finalUrl);
    let pagesType: PagesSitemapType | null = null;
    let accepted = 0;
    let cut = false;
    const info = { url: finalUrl, type: 'PagesXMLSitemap' as PagesSitemapType };
    const onPages = async (batch: Page[], type?: PagesSitemapType): Promise<void> => {
      if (type !== undefined && pagesType === null) {
        pagesType = type;
        info.type = type;
      }
      let pages = batch;
      const room = this.config.maxPages - this.#pages;
      if (pages.length > room) {
        pages = pages.slice(0, Math.max(room, 0));
        if (!cut) {
          cut = true;
          // Stops this body (and every other): the document ends as truncated with what it has.
          this.stop('maxPages');
        }
      }
      if (pages.length === 0) return;
      if (writer.appendPages !== undefined) writer.appendPages(pages);
      else for (const p of pages) writer.append(p);
      accepted += pages.length;
      this.#pages += pages.length;
      if (this.#sink !== null) await this.#sink(pages, info);
      this.#progress();
    };
    const parseOptions: Omit<ParseDocumentOptions, 'registry'> = {
      url: finalUrl,
      body: response.body,
      headers: response.headers,
      onPages,
      // Abort and deadline end the parse at once, keeping what was read (the body is cut too).
      signal: this.signal,
      ...(hooks.onWarning !== undefined ? { onWarning: hooks.onWarning } : {}),
      ...(documentLimits !== undefined ? { limits: documentLimits } : {}),
      ...(gunzip !== undefined ? { gunzip } : {}),
    };
    const parse = this.config.parse;
    let parsed: ParsedDocument;
    try {
      parsed = await parse({ ...parseOptions, registry: await this.#registry() });
    } catch (error) {
      response.cancel();
      const stored = writer.close();
      if (accepted > 0 && pagesType !== null) {
        // The parser gave up after pages flowed (aborted mid-body): keep them.
        const warnings: Warning[] = [];
        this.#warn(warnings, 'truncated', `Reading ${finalUrl} stopped: ${errorText(error)}`, finalUrl);
        const doc: ParsedDocument = {
          url: finalUrl,
          type: pagesType,
          children: [],
          warnings,
          bytes: 0,
          truncated: true,
        };
        const node = sitemapFromDocument(doc, { stored, lastModified: task.lastModified });
        return [this.#result(task, node, contentType), []];
      }
      stored.release?.();
      const reason = `Unable to parse sitemap from ${finalUrl}: ${errorText(error)}`;
      return [
        this.#result(task, this.#invalidNode(finalUrl, reason, task.lastModified, 'fetch'), contentType),
        [],
      ];
    } finally {
      // A parser that stopped early (a limit, an invalid root) leaves the rest unread.
      response.cancel();
    }
    this.#bytes += parsed.bytes;
    if (cut) {
      this.#warn(
        parsed.warnings,
        'limit',
        `Pages after the walk's limit of ${this.config.maxPages} were dropped`,
        parsed.url,
      );
    }
    const node = sitemapFromDocument(parsed, { stored: writer.close(), lastModified: task.lastModified });
    return [
      this.#result(task, node, contentType),
      node instanceof AbstractIndexSitemap ? parsed.children : [],
    ];
  }

  #offSite(url: string): string | null {
    return this.config.hostPolicy === 'same-site' ? offSiteReason(url, this.config.homepageUrl) : null;
  }

  /** usp's index recursion: list filter, then per-child filter, depth and cycle checks, then fetch. */
  async #fetchChildren(
    index: AbstractIndexSitemap,
    task: FetchTask,
    requestedUrl: string,
    refs: ChildRef[],
  ): Promise<void> {
    const { recurseCallback, recurseListCallback } = this.config.hooks;
    const ancestry = childAncestry(task.ancestry, requestedUrl, index.url);
    const urls = ancestry.urls;
    let wanted: ChildRef[] = refs;
    if (recurseListCallback !== undefined) {
      let kept: string[];
      try {
        kept = recurseListCallback(
          refs.map((r) => r.url),
          task.level,
          urls,
          refs.map((r) => r.lastModified),
        );
      } catch (error) {
        this.fail(error);
        return;
      }
      wanted = keptChildren(refs, kept);
    }
    const level = task.level + 1;
    const ordered = task.place !== undefined;
    const places: (TreePlace | undefined)[] = [];
    const slots: (Promise<FetchResult> | Sitemap | null)[] = wanted.map((ref, i) => {
      const prefix = `Unable to add sub-sitemap from URL ${ref.url}: `;
      if (recurseCallback !== undefined) {
        try {
          if (!recurseCallback(ref.url, task.level, urls, ref.lastModified)) return null;
        } catch (error) {
          return this.#invalidNode(ref.url, prefix + errorText(error), ref.lastModified, 'fetch');
        }
      }
      const refusal = childRefusal(ref.url, level, this.config.maxDepth, ancestry);
      if (refusal !== null) {
        return this.#invalidNode(ref.url, prefix + refusal.reason, ref.lastModified, refusal.code);
      }
      const offSite = this.#offSite(ref.url);
      if (offSite !== null)
        return this.#invalidNode(ref.url, `${prefix}${offSite}`, ref.lastModified, 'blocked');
      const place = ordered ? new TreePlace() : undefined;
      places[i] = place;
      return this.fetch({
        url: ref.url,
        level,
        ancestry,
        lastModified: ref.lastModified,
        parentUrl: index.url,
        ...(place !== undefined ? { place } : {}),
      });
    });
    // The children's places, in the order of the `subSitemaps` the loop below fills.
    if (ordered) {
      task.place?.listed(
        slots.flatMap((slot, i) =>
          slot === null ? [] : slot instanceof Promise ? [places[i] as TreePlace] : [TreePlace.of(slot)],
        ),
      );
    }
    // Completion order is whatever the network gives; the tree keeps the index's order.
    for (const slot of slots) {
      if (slot === null) continue;
      index.subSitemaps.push(slot instanceof Promise ? (await slot).node : slot);
    }
  }
}

type RevisitPlanLike = { readonly ifNoneMatch?: string; readonly ifModifiedSince?: string };

/** Runs a caller's hook; its exception is not the walk's (a hook must not break a crawl). */
function hook<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
