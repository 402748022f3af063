import type { RunMark, SitemapState, SiteState, StateStore, StoredChild } from '@usp-ts/core';
import {
  type ChildRef,
  errorText,
  IndexRobotsTxtSitemap,
  InvalidSitemap,
  parseIsoDate,
  type Registry,
  type RegistryLoader,
  type Revisit,
  type SitemapDate,
  type StoredDocument,
  sitemapTreeForHomepageWithClient,
  type TreeOptions,
  type WalkedDocument,
  type WebClient,
} from '@usp-ts/core';
import type { BatchSink } from './batch-sink.js';
import { OutputError } from './output-error.js';
import { PageTracker } from './page-changes.js';
import type { PolitenessGate } from './politeness-gate.js';
import { RecordingClient } from './recording-client.js';
import { cutDocumentState, disappearedPageRows, removedPageRows } from './removed-pages.js';
import type { PageRow, SitemapRow, SiteResult, SiteStatus } from './rows.js';
import { DEFAULT_PROBE_TIMEOUT_MS, probeFailureText, probeSite } from './unreachable-probe.js';

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
  readonly sink: BatchSink;
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

export const DEFAULT_SITE_DEADLINE_MS = 10 * 60_000;
/**
 * How often a site's 14 known paths are all probed again. In between, an incremental walk probes
 * only those that were sitemaps last time: on a daily run of sites with nothing new, the misses
 * would otherwise be most of the requests.
 */
export const REPROBE_EVERY_MS = 7 * 86_400_000;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const iso = (d: SitemapDate | null): string | null => (d === null ? null : d.toSourceString());

function toChildRefs(children: readonly StoredChild[]): ChildRef[] {
  // Core's parser reads the stored `toSourceString()` back to a date that prints the same, so a
  // child replayed from a 304 compares equal to its stored `<lastmod>` and can be skipped.
  return children.map((c) => ({
    url: c.url,
    lastModified: c.lastModified === null ? null : parseIsoDate(c.lastModified),
  }));
}

function storedOf(rec: SitemapState): StoredDocument {
  return { type: rec.type, children: toChildRefs(rec.children) };
}

/** robots.txt's `Crawl-delay` for every crawler (`*`), in ms. */
function crawlDelayOf(node: IndexRobotsTxtSitemap): number | null {
  for (const g of node.robots?.groups ?? []) {
    if (g.userAgents.includes('*') && g.crawlDelay !== null) return g.crawlDelay * 1000;
  }
  return null;
}

/** Known-path options that probe only the top-level sitemaps the last walk found (not robots.txt's). */
function probeOnly(
  prev: SiteState,
  extra: readonly string[],
): Pick<TreeOptions, 'knownPaths' | 'extraKnownPaths'> {
  const listed = new Set<string>();
  for (const s of prev.sitemaps) for (const c of s.children) listed.add(c.url);
  const found = prev.sitemaps
    .filter((s) => s.type !== 'IndexRobotsTxtSitemap' && !listed.has(s.url))
    .map((s) => s.url);
  return { knownPaths: [], extraKnownPaths: [...extra, ...found] };
}

function hostOf(url: string): string {
  return new URL(url).hostname;
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
 * Inputs and outputs are plain data and everything shared is passed in, so a queue worker can
 * call it as it is.
 */
export async function walkSite(job: SiteJob, ctx: SiteJobContext): Promise<SiteResult> {
  const started = performance.now();
  const now = ctx.now?.() ?? Date.now();
  const site = job.site;
  const output = ctx.sink.begin(site);
  const client = new RecordingClient(ctx.webClient, ctx.gate);
  const state = ctx.state ?? null;
  let pages = 0;
  let sitemaps = 0;
  let skipped = 0;
  const result = (status: SiteStatus, reason: string | null): SiteResult => ({
    site,
    status,
    reason,
    pages,
    sitemaps,
    requests: client.counts.requests,
    notModified: client.counts.notModified,
    skipped,
    bytes: client.counts.bytes,
    ms: Math.round(performance.now() - started),
  });
  let committing = false;
  try {
    const prev = state === null ? null : await state.loadSite(site);
    const full =
      job.full === true ||
      (prev !== null && ctx.fullEveryMs !== undefined && now - prev.fullWalkAt >= ctx.fullEveryMs);
    const wasUnreachable = prev?.unreachable ?? null;
    if (state !== null && prev !== null && wasUnreachable !== null && !full) {
      // A daily run would otherwise spend the full timeouts and retries on a dead host every day.
      const failure = await probeSite(
        client,
        site,
        ctx.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS,
        ctx.signal,
      );
      if (failure !== null) {
        const final = result('unreachable', probeFailureText(failure, wasUnreachable));
        const newState: SiteState = { ...prev, unreachable: { ...wasUnreachable, at: now, reason: failure } };
        committing = true;
        await output.commit(final, (mark) => state.saveSite(newState, mark));
        return final;
      }
    }
    const prevByUrl = new Map((prev?.sitemaps ?? []).map((s) => [s.url, s]));
    const prevByFinal = new Map((prev?.sitemaps ?? []).map((s) => [s.finalUrl, s]));
    const probeAll = prev === null || full || now - prev.probedAt >= REPROBE_EVERY_MS;
    let trust = prev?.lastmodTrust ?? 0;
    const honest = trust > 0;
    const next = new Map<string, SitemapState>();
    const trackers = new Map<string, PageTracker>();
    // The walk keeps going past a page store that throws (a page is not worth a site): an
    // exception here is ours, and the site ends as `error` rather than `ok` without its pages.
    let emitFailure: unknown = null;
    const emit = (row: PageRow, json?: string): void => {
      if (emitFailure !== null) return;
      try {
        output.page(row, json);
        pages++;
      } catch (error) {
        emitFailure = error;
      }
    };

    const revisit: Revisit | undefined =
      prev === null || full
        ? undefined
        : {
            plan(url, indexLastmod) {
              const rec = prevByUrl.get(url);
              if (rec === undefined) return undefined;
              const lm = iso(indexLastmod);
              if (honest && !rec.news && rec.indexLastmod !== null && lm === rec.indexLastmod) {
                return { reuse: storedOf(rec) };
              }
              const validators: { ifNoneMatch?: string; ifModifiedSince?: string } = {};
              if (rec.etag !== null) validators.ifNoneMatch = rec.etag;
              if (rec.lastModified !== null) validators.ifModifiedSince = rec.lastModified;
              return validators;
            },
            notModified(url) {
              const rec = prevByUrl.get(url);
              return rec === undefined ? undefined : storedOf(rec);
            },
          };

    // The last run's page digests, read only for documents read again (by the URL they were
    // stored under): before the body is parsed, since the page writer marks pages as they come.
    const digests = new Map<string, Uint8Array | null>();
    const walkClient: WebClient =
      state === null || prev === null
        ? client
        : {
            async get(url, options) {
              const response = await client.get(url, options);
              if (response.kind !== 'ok') return response;
              const rec = prevByFinal.get(response.url) ?? prevByUrl.get(url);
              if (rec === undefined || rec.pages !== undefined || digests.has(rec.url)) return response;
              try {
                digests.set(rec.url, await state.loadPages(site, rec.url));
              } catch (error) {
                response.cancel();
                throw error;
              }
              return response;
            },
          };

    const onDocument = (doc: WalkedDocument): void => {
      const node = doc.node;
      const rec = client.records.get(doc.requestedUrl);
      const before = prevByUrl.get(doc.requestedUrl) ?? null;
      const tracker = trackers.get(node.url) ?? null;
      const lm = iso(node.lastModified);
      const invalid = node instanceof InvalidSitemap;
      // The 14 known-path probes that miss are noise, not sitemaps.
      const missedProbe = invalid && doc.level === 0 && !doc.requestedUrl.endsWith('/robots.txt');
      if (!missedProbe) {
        sitemaps++;
        if (doc.reused === 'skipped') skipped++;
        // Field by field, in the row's order: in an object literal, every property after a
        // conditional spread is defined through a V8 runtime call (a dozen a row here).
        const row = { site, url: doc.requestedUrl } as Mutable<SitemapRow>;
        if (node.url !== doc.requestedUrl) row.finalUrl = node.url;
        row.parent = doc.parentUrl;
        row.type = node.type;
        row.status = rec?.status ?? null;
        row.notModified = doc.reused === 'not-modified';
        row.skipped = doc.reused === 'skipped';
        row.etag = rec?.etag ?? before?.etag ?? null;
        row.lastModified = rec?.lastModified ?? before?.lastModified ?? null;
        row.bytes = rec?.bytes ?? 0;
        row.pages = tracker?.count ?? 0;
        row.ms = Math.round(rec?.ms ?? 0);
        if (state !== null && !invalid) {
          row.change =
            doc.reused !== null ? 'unchanged' : (tracker?.change ?? (before === null ? 'new' : 'changed'));
        }
        if (invalid) row.reason = node.reason;
        output.sitemap(row);
      }
      let crawlDelayMs: number | null = null;
      if (node instanceof IndexRobotsTxtSitemap) {
        crawlDelayMs = doc.reused !== null ? (before?.crawlDelayMs ?? null) : crawlDelayOf(node);
        if (crawlDelayMs !== null && crawlDelayMs > 0) {
          // A shared gate that cannot record the delay leaves the host at its per-host limit.
          Promise.resolve(ctx.gate.setCrawlDelay(hostOf(node.url), crawlDelayMs)).catch(() => {});
        }
      }
      if (state === null || invalid) return;
      if (doc.reused !== null && before !== null) {
        // A 304 while the index `<lastmod>` moved: the `<lastmod>` says nothing here.
        if (
          doc.reused === 'not-modified' &&
          before.indexLastmod !== null &&
          lm !== null &&
          lm !== before.indexLastmod
        ) {
          trust = -1;
        }
        // Object.assign rather than a spread (see `options`); the same keys in the same order.
        const kept = Object.assign({}, before) as Mutable<SitemapState>;
        kept.etag = rec?.etag ?? before.etag;
        kept.lastModified = rec?.lastModified ?? before.lastModified;
        kept.indexLastmod = lm;
        // Not read in full: a 304 or a skip leaves the stored row as it was.
        kept.fetchedAt = before.fetchedAt;
        next.set(doc.requestedUrl, kept);
        return;
      }
      // Only a document read to its end is worth its validators: a cut one is fetched in full next time.
      const complete =
        rec !== undefined &&
        rec.sha256 !== null &&
        !node.warnings.some((w) => w.code === 'truncated' || w.code === 'limit');
      if (!complete) {
        if (tracker !== null)
          next.set(
            doc.requestedUrl,
            cutDocumentState({ requestedUrl: doc.requestedUrl, node, tracker, before }),
          );
        return;
      }
      if (tracker !== null) for (const removed of removedPageRows(site, tracker)) emit(removed);
      if (before !== null && before.bodySha256 !== null && before.indexLastmod !== null && lm !== null) {
        const lastmodMoved = lm !== before.indexLastmod;
        const bodyChanged = rec.sha256 !== before.bodySha256;
        if (lastmodMoved !== bodyChanged) trust = -1;
        else if (lastmodMoved && trust >= 0) trust++;
      }
      next.set(doc.requestedUrl, {
        url: doc.requestedUrl,
        finalUrl: node.url,
        type: node.type as SitemapState['type'],
        etag: rec.etag,
        lastModified: rec.lastModified,
        indexLastmod: lm,
        bodySha256: rec.sha256,
        children: doc.children.map((c) => ({ url: c.url, lastModified: iso(c.lastModified) })),
        pageCount: tracker?.count ?? 0,
        pages: tracker === null ? null : tracker.digest.slice(),
        news: tracker?.news ?? false,
        crawlDelayMs,
        fetchedAt: now,
      });
    };

    // Object.assign, not `{ ...ctx.walkOptions }`: V8 gives every object made by an object spread
    // a map of its own, and the walk's every read of its options then went to the runtime.
    const options = Object.assign({}, ctx.walkOptions) as Mutable<TreeOptions>;
    if (!(probeAll || prev === null)) {
      const probe = probeOnly(prev, ctx.walkOptions?.extraKnownPaths ?? []);
      options.knownPaths = probe.knownPaths;
      options.extraKnownPaths = probe.extraKnownPaths;
    }
    options.webClient = walkClient;
    options.registry = ctx.registry;
    options.deadlineMs = ctx.deadlineMs ?? DEFAULT_SITE_DEADLINE_MS;
    if (ctx.signal !== undefined) options.signal = ctx.signal;
    if (revisit !== undefined) options.revisit = revisit;
    options.onDocument = onDocument;
    options.pageStore = {
      open(url) {
        const rec = prevByFinal.get(url);
        const tracker = new PageTracker({
          site,
          sitemap: url,
          emit,
          marking: state !== null,
          previous:
            rec === undefined
              ? null
              : {
                  pages: rec.pages !== undefined ? rec.pages : (digests.get(rec.url) ?? null),
                  pageCount: rec.pageCount,
                },
          emitUnchanged: full,
        });
        trackers.set(url, tracker);
        return tracker;
      },
    };
    const tree = await sitemapTreeForHomepageWithClient(site, options);
    if (ctx.signal?.aborted) {
      output.discard();
      return result('partial', 'aborted');
    }
    if (emitFailure !== null) throw emitFailure;
    // The walk's own verdict (core's breaker gives up on a dead origin within seconds).
    const { outcome, reason } = tree.summary;
    const unreachable = outcome === 'unreachable';
    const status: SiteStatus = outcome;
    const final = result(status, reason);
    let save: ((mark: RunMark) => Promise<void>) | undefined;
    if (state !== null && unreachable) {
      // Kept as it was, with the mark that makes the next incremental run probe first.
      const mark = { at: now, since: wasUnreachable?.since ?? now, reason: reason ?? 'no answer' };
      // A site never reached keeps no documents; `probedAt` 0 has every known path probed once
      // it answers.
      const newState: SiteState =
        prev === null
          ? {
              site,
              walkedAt: now,
              fullWalkAt: now,
              probedAt: 0,
              lastmodTrust: 0,
              unreachable: mark,
              sitemaps: [],
            }
          : { ...prev, unreachable: mark };
      save = (runMark) => state.saveSite(newState, runMark);
    } else if (state !== null) {
      // Documents that failed this time, and (when the walk was cut) those not reached, keep
      // their last state; an ok walk forgets documents no longer listed.
      for (const [url, rec] of prevByUrl) {
        if (next.has(url)) continue;
        if (status !== 'ok' || client.records.has(url)) next.set(url, rec);
      }
      if (status === 'ok' && prev !== null) {
        const loadPages = (url: string) => state.loadPages(site, url);
        for (const removed of await disappearedPageRows({ site, prev, next, loadPages })) emit(removed);
      }
      const newState: SiteState = {
        site,
        walkedAt: now,
        fullWalkAt: full || prev === null ? now : prev.fullWalkAt,
        probedAt: probeAll || prev === null ? now : prev.probedAt,
        lastmodTrust: trust,
        unreachable: null,
        sitemaps: [...next.values()],
      };
      save = (mark) => state.saveSite(newState, mark);
    }
    committing = true;
    await output.commit(final, save);
    return final;
  } catch (error) {
    // An output or state that cannot be written is the run's failure, not the site's.
    if (committing) throw asCommitFailure(error);
    output.discard();
    const reason = errorText(error);
    const failed = result('error', reason);
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
