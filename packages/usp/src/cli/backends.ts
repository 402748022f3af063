import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  type BackendDriver,
  type NdjsonSink,
  openBackend,
  openNdjsonSink,
  type StateStore,
  StateStoreError,
} from '@usp-ts/batch';
import { InvalidOptionError } from '@usp-ts/core';
import { UsageError } from './args.js';
import { loadOptionalPackage } from './optional-package.js';

// The backends `usp batch` and `usp worker` open from their flags, through batch's one resolver
// (`openBackend`): a new state store or result store is one driver added to a list below.

/** What opening a state store may wait on. */
export interface StateContext {
  /** Stops the start-up check of a server (a Redis that does not answer). */
  readonly signal?: AbortSignal;
}

/** How `--out` is opened. */
export interface OutputContext {
  /** Go on with the run the output holds (`--resume`); `'if-any'`: when it holds one (a restarted worker). */
  readonly resume: boolean | 'if-any';
  /** The writer's own part of the output (a worker's id: `DIR/<id>/` for files). */
  readonly writer?: string;
  readonly gzip?: boolean;
  /** The run's state: the output recognises a site whose state was saved just before a kill. */
  readonly state: StateStore | null;
  /** A queue's void copies (see `openNdjsonSink`). */
  readonly voidedCopies?: (tokens: readonly string[]) => Promise<ReadonlySet<string>>;
  readonly onDropped?: (sites: readonly string[]) => void;
}

/** The SQLite store is loaded only when asked for: a native module nobody else needs. */
async function sqliteState(path: string): Promise<StateStore> {
  let mod: typeof import('@usp-ts/state-sqlite');
  try {
    mod = await import('@usp-ts/state-sqlite');
  } catch (cause) {
    throw new StateStoreError(
      'io',
      `--state needs the optional package @usp-ts/state-sqlite (npm install @usp-ts/state-sqlite), which did not load: ${(cause as Error).message}`,
      { cause, path },
    );
  }
  return mod.sqliteStateStore(path);
}

/** `--state` of `usp batch` and `usp worker`. */
export const STATE_DRIVERS: readonly BackendDriver<StateStore, StateContext>[] = [
  {
    schemes: ['', 'sqlite'],
    forms: ['FILE', 'sqlite:FILE'],
    open: (spec) => sqliteState(spec.location),
  },
  {
    schemes: ['redis', 'rediss'],
    forms: ['redis://HOST[:PORT][/DB]'],
    async open(spec, context) {
      const queue = await loadOptionalPackage(
        '@usp-ts/queue-bullmq',
        '--state redis://',
        () => import('@usp-ts/queue-bullmq'),
      );
      // A Redis that is not there at start is said at once (one line, exit 1); once running, a
      // Redis that goes away is waited for.
      await queue.assertRedisReachable(
        spec.text,
        context.signal !== undefined ? { signal: context.signal } : {},
      );
      return queue.redisStateStore({ connection: spec.text });
    },
  },
];

/** `--out` of `usp batch` and `usp worker`. */
export const OUTPUT_DRIVERS: readonly BackendDriver<NdjsonSink, OutputContext>[] = [
  {
    schemes: [''],
    forms: ['DIR'],
    open(spec, context) {
      const dir = context.writer === undefined ? spec.location : join(spec.location, context.writer);
      return openNdjsonSink({
        dir,
        ...(context.gzip !== undefined ? { gzip: context.gzip } : {}),
        // A writer restarted under its id goes on with its own files (cutting what a kill left).
        resume: context.resume === 'if-any' ? existsSync(join(dir, 'journal.ndjson')) : context.resume,
        state: context.state,
        ...(context.voidedCopies !== undefined ? { voidedCopies: context.voidedCopies } : {}),
        ...(context.onDropped !== undefined ? { onDropped: context.onDropped } : {}),
      });
    },
  },
];

/** A spec no driver takes is a usage error (exit 2), said in one line. */
async function asUsage<T>(open: () => Promise<T>, usage: string): Promise<T> {
  try {
    return await open();
  } catch (err) {
    if (err instanceof InvalidOptionError) {
      throw new UsageError(`option --${err.option}: ${err.message.replace(/^Option \S+: /, '')}`, usage);
    }
    throw err;
  }
}

/** Opens `--state SPEC`. */
export function openStateFlag(spec: string, context: StateContext, usage: string): Promise<StateStore> {
  return asUsage(() => openBackend(spec, STATE_DRIVERS, context, 'state'), usage);
}

/** Opens `--out SPEC`. */
export function openOutputFlag(spec: string, context: OutputContext, usage: string): Promise<NdjsonSink> {
  return asUsage(() => openBackend(spec, OUTPUT_DRIVERS, context, 'out'), usage);
}
