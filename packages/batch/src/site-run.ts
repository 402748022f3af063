import {
  InvalidOptionError,
  type Registry,
  type RegistryLoader,
  rejectUnknownOptions,
  type WebClient,
} from '@usp-ts/core';
import { DEFAULT_MAX_CRAWL_DELAY_MS, DEFAULT_PER_HOST, type PolitenessGate } from './politeness-gate.js';
import { DEFAULT_SITE_DEADLINE_MS, type SiteJobContext, type SiteWalkOptions } from './site-job.js';
import type { SiteSink } from './site-sink.js';
import type { StateStore } from './state-store.js';
import { DEFAULT_PROBE_TIMEOUT_MS } from './unreachable-probe.js';

// The settings of a many-sites run, whoever runs it (`batchWalk` in one process, a queue's
// worker, a runner of your own): written, documented and checked here once. A runner's options
// extend `SiteRunOptions` with its own, checks them with `checkSiteRunOptions` and builds each
// site's context with `siteJobContext`.

/** How the sites of a run are walked and where their rows go: the options every runner takes. */
export interface SiteRunOptions {
  /** The shared HTTP client (`createWebClient` of `@usp-ts/fetcher`). Required. */
  readonly webClient: WebClient;
  /**
   * The formats (`createDefaultRegistry()` of `usp`), or a `RegistryLoader` giving them when a
   * site first has a document to parse: a run where every answer is a 304 never loads them. Required.
   */
  readonly registry: Registry | RegistryLoader;
  /** Where rows go. Required. */
  readonly sink: SiteSink;
  /** Incremental state (default: none). */
  readonly state?: StateStore | null;
  /** Site walks at once (default 16). */
  readonly sites?: number;
  /** Requests in flight to one host name (default 2); ignored when `gate` is given. */
  readonly perHost?: number;
  /** Longest robots.txt `Crawl-delay` honoured, in ms (default 10,000); ignored when `gate` is given. */
  readonly maxCrawlDelayMs?: number;
  /** Your own politeness gate (default: the runner's, from `perHost` and `maxCrawlDelayMs`). */
  readonly gate?: PolitenessGate;
  /** Each site's wall-clock budget, in ms (default 10 minutes). */
  readonly siteDeadlineMs?: number;
  /** A full walk of a site when its last one is older than this, in ms (default: never). */
  readonly fullEveryMs?: number;
  /**
   * How long the one probe of a site that gave no answer on its previous run waits, in ms
   * (default 1,500): such a site is walked only if its robots.txt answers that probe.
   */
  readonly probeTimeoutMs?: number;
  /** Options of every site walk (user agent and timeouts belong to the client). */
  readonly walkOptions?: SiteWalkOptions;
}

/** The one table of `SiteRunOptions`' names; a runner adds the names of its own options. */
export const SITE_RUN_OPTION_KEYS = {
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
  probeTimeoutMs: true,
  walkOptions: true,
} as const satisfies Record<keyof SiteRunOptions, true>;

export const DEFAULT_SITES = 16;

/** `SiteRunOptions` checked, with their defaults. */
export interface SiteRun {
  readonly webClient: WebClient;
  readonly registry: Registry | RegistryLoader;
  readonly sink: SiteSink;
  readonly state: StateStore | null;
  readonly sites: number;
  readonly perHost: number;
  readonly maxCrawlDelayMs: number;
  /** The caller's gate; `null`: the runner makes its own from `perHost` and `maxCrawlDelayMs`. */
  readonly gate: PolitenessGate | null;
  readonly siteDeadlineMs: number;
  /** `null`: never. */
  readonly fullEveryMs: number | null;
  readonly probeTimeoutMs: number;
  readonly walkOptions: SiteWalkOptions | undefined;
}

/** What the runner sets on every walk: not for `walkOptions`. */
const RUNNER_WALK_KEYS = [
  'webClient',
  'registry',
  'pageStore',
  'revisit',
  'onDocument',
  'conditionalRequest',
  'deadlineMs',
  'signal',
  'onProgress',
] as const;

function positiveMs(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value > 0))
    throw new InvalidOptionError(name, 'must be a number of ms > 0');
  return value;
}

function wholeNumber(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new InvalidOptionError(name, 'must be an integer >= 1');
  }
  return value;
}

function hasMethod(value: unknown, name: string): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Record<string, unknown>)[name] === 'function'
  );
}

/**
 * Checks a runner's options once, before any site starts: unknown names (with a "did you mean"),
 * against `SITE_RUN_OPTION_KEYS` and the runner's own `runnerKeys`, then the types and ranges of
 * the site-run options. Throws `InvalidOptionError` (code `USP_INVALID_OPTION`).
 */
export function checkSiteRunOptions(
  options: SiteRunOptions,
  runnerKeys: Readonly<Record<string, true>>,
): SiteRun {
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionError('options', 'must be an object with webClient, registry and sink');
  }
  rejectUnknownOptions(options, { ...SITE_RUN_OPTION_KEYS, ...runnerKeys });
  if (!hasMethod(options.webClient, 'get')) throw new InvalidOptionError('webClient', 'is required');
  const registry = options.registry;
  if (typeof registry !== 'function' && !hasMethod(registry, 'xmlFormatFor')) {
    throw new InvalidOptionError(
      'registry',
      'is required (a Registry, or a function giving a promise of one)',
    );
  }
  if (!hasMethod(options.sink, 'begin')) throw new InvalidOptionError('sink', 'is required');
  const state = options.state ?? null;
  if (state !== null && !(hasMethod(state, 'loadSite') && hasMethod(state, 'saveSite'))) {
    throw new InvalidOptionError('state', 'must be a StateStore (loadSite, saveSite, ...) or null');
  }
  const gate = options.gate ?? null;
  if (gate !== null && !(hasMethod(gate, 'acquire') && hasMethod(gate, 'setCrawlDelay'))) {
    throw new InvalidOptionError('gate', 'must be a PolitenessGate (acquire, setCrawlDelay)');
  }
  const maxCrawlDelayMs = options.maxCrawlDelayMs ?? DEFAULT_MAX_CRAWL_DELAY_MS;
  if (typeof maxCrawlDelayMs !== 'number' || !(maxCrawlDelayMs >= 0)) {
    throw new InvalidOptionError('maxCrawlDelayMs', 'must be a number of ms >= 0');
  }
  const walkOptions = options.walkOptions;
  if (walkOptions !== undefined) {
    if (walkOptions === null || typeof walkOptions !== 'object') {
      throw new InvalidOptionError('walkOptions', 'must be an object');
    }
    for (const key of RUNNER_WALK_KEYS) {
      if (Object.hasOwn(walkOptions, key)) {
        throw new InvalidOptionError(`walkOptions.${key}`, 'is set by the runner for each site');
      }
    }
  }
  return {
    webClient: options.webClient,
    registry,
    sink: options.sink,
    state,
    sites: wholeNumber('sites', options.sites, DEFAULT_SITES),
    perHost: wholeNumber('perHost', options.perHost, DEFAULT_PER_HOST),
    maxCrawlDelayMs,
    gate,
    siteDeadlineMs: positiveMs('siteDeadlineMs', options.siteDeadlineMs, DEFAULT_SITE_DEADLINE_MS),
    fullEveryMs: options.fullEveryMs === undefined ? null : positiveMs('fullEveryMs', options.fullEveryMs, 0),
    probeTimeoutMs: positiveMs('probeTimeoutMs', options.probeTimeoutMs, DEFAULT_PROBE_TIMEOUT_MS),
    walkOptions,
  };
}

/**
 * The context every site of a run walks with: the run's settings, the runner's gate, and the sink
 * and signal of the job (a queue's worker gives each job its own fencing sink and signal).
 */
export function siteJobContext(
  run: SiteRun,
  job: { readonly gate: PolitenessGate; readonly sink: SiteSink; readonly signal: AbortSignal },
): SiteJobContext {
  return {
    webClient: run.webClient,
    registry: run.registry,
    gate: job.gate,
    sink: job.sink,
    state: run.state,
    deadlineMs: run.siteDeadlineMs,
    ...(run.fullEveryMs !== null ? { fullEveryMs: run.fullEveryMs } : {}),
    probeTimeoutMs: run.probeTimeoutMs,
    ...(run.walkOptions !== undefined ? { walkOptions: run.walkOptions } : {}),
    signal: job.signal,
  };
}
