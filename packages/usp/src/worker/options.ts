import { availableParallelism } from 'node:os';
import type { ResourceLimits } from 'node:worker_threads';
import { InvalidOptionError, rejectUnknownOptions } from '@usp-ts/core';

export interface WorkerParserOptions {
  /** Worker threads (default: `min(2, os.availableParallelism())`). */
  workers?: number;
  /**
   * Documents announced (Content-Length) or given (string, bytes) smaller than this, and every
   * robots.txt, are parsed in the calling thread with the caller's registry: a round trip costs
   * more than they do, and robots.txt rules are functions that cannot cross threads. Default 65536.
   */
  inlineBelowBytes?: number;
  /**
   * Module the workers import for their formats: it must export `createRegistry(): Registry`.
   * Default: this package's `createDefaultRegistry`. The caller's `registry` object cannot be
   * sent to another thread, so a custom registry needs this.
   */
  registryModule?: string | URL;
  /**
   * Plugin modules (URLs, see `resolvePluginModule`) the workers add to the default registry, as
   * `sitemapTreeForHomepage`'s `pluginModules` and `usp --plugin` do. Ignored with `registryModule`.
   */
  pluginModules?: readonly string[];
  /** Where the worker script is, for bundlers that move it (default: `./worker.js` beside this file). */
  workerUrl?: string | URL;
  /** Bytes of body sent ahead to a worker before it has read them (default 1 MiB). */
  maxBytesInFlight?: number;
  /**
   * V8 heap limits of each worker (default: V8's own). A small young generation saves a few MiB
   * of RSS but costs much more in garbage collection (8 MiB: +30% parse time on the 1M site);
   * an old-generation cap makes a worker die, and its documents fail, on a large document.
   */
  resourceLimits?: ResourceLimits;
  /**
   * Large documents parsed in the calling thread at the same time before the next one goes to a
   * worker (default 0: every large document goes to a worker). With 1, one worker and the calling
   * thread share two cores: a single document never pays the crossing, and a second document in
   * flight runs in parallel on the worker.
   */
  callerThreadDocuments?: number;
}

/** What a pool reads of its options, checked and with defaults filled in. */
export interface PoolConfig {
  readonly size: number;
  readonly inlineBelowBytes: number;
  readonly maxBytesInFlight: number;
  readonly callerThreadDocuments: number;
  /** What every worker thread of the pool is started with. */
  readonly thread: ThreadConfig;
}

/** How a pool's worker threads are started. */
export interface ThreadConfig {
  readonly workerUrl: string | URL;
  readonly registryModule: string | null;
  readonly pluginModules: readonly string[];
  readonly resourceLimits: ResourceLimits | undefined;
  /** The caller stores pages as records only (see `createStoringWorkerParser`). */
  readonly recordsOnly: boolean;
}

// Every key of the options type, so the table cannot fall behind it.
const WORKER_PARSER_OPTIONS = {
  workers: true,
  inlineBelowBytes: true,
  registryModule: true,
  pluginModules: true,
  workerUrl: true,
  maxBytesInFlight: true,
  resourceLimits: true,
  callerThreadDocuments: true,
} satisfies Record<keyof WorkerParserOptions, true>;

/** Checks a pool's options (throws `InvalidOptionError`) and fills in the defaults. */
export function resolvePoolConfig(options: WorkerParserOptions, recordsOnly: boolean): PoolConfig {
  rejectUnknownOptions(options, WORKER_PARSER_OPTIONS);
  const size = options.workers ?? Math.min(2, availableParallelism());
  if (!Number.isInteger(size) || size < 1) throw new InvalidOptionError('workers', 'must be an integer >= 1');
  const inlineBelowBytes = options.inlineBelowBytes ?? 65_536;
  if (typeof inlineBelowBytes !== 'number' || !(inlineBelowBytes >= 0)) {
    throw new InvalidOptionError('inlineBelowBytes', 'must be a number >= 0');
  }
  const maxBytesInFlight = options.maxBytesInFlight ?? 1024 * 1024;
  if (typeof maxBytesInFlight !== 'number' || !(maxBytesInFlight >= 1)) {
    throw new InvalidOptionError('maxBytesInFlight', 'must be a number >= 1');
  }
  const callerThreadDocuments = options.callerThreadDocuments ?? 0;
  if (!Number.isInteger(callerThreadDocuments) || callerThreadDocuments < 0) {
    throw new InvalidOptionError('callerThreadDocuments', 'must be an integer >= 0');
  }
  return {
    size,
    inlineBelowBytes,
    maxBytesInFlight,
    callerThreadDocuments,
    thread: {
      workerUrl: options.workerUrl ?? new URL('./worker.js', import.meta.url),
      registryModule: options.registryModule === undefined ? null : String(options.registryModule),
      pluginModules: [...(options.pluginModules ?? [])],
      resourceLimits: options.resourceLimits,
      recordsOnly,
    },
  };
}

/** @internal What the CLI sets for the parse workers of its own process (see `tuneParseWorkers`). */
interface ProcessTuning {
  youngGenerationMb: number | null;
  externalGcStepMb: number | null;
}

const processTuning: ProcessTuning = { youngGenerationMb: null, externalGcStepMb: null };

/**
 * @internal For the CLI's own process, never the library: the parse workers started from now on
 * get a young generation of `youngGenerationMb` (over `resourceLimits`' own) and run a full
 * collection whenever their external memory grows by `externalGcStepMb` MiB, as the CLI's main
 * thread does (node/external-memory-gc.ts). A worker's young generation as large as the main thread's
 * halves its scavenges; without the collections, the spent body chunks whose wrappers were
 * promoted (a worker holds up to `maxBytesInFlight` of them) would wait for V8's own full
 * collection, 64 MiB of external memory later.
 */
export function tuneParseWorkers(tuning: Partial<ProcessTuning>): void {
  Object.assign(processTuning, tuning);
}

/** The process's tuning as it is now (read as each worker starts). */
export function parseWorkerTuning(): Readonly<ProcessTuning> {
  return processTuning;
}
