import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  type BackendDriver,
  type BackendSpec,
  openBackend,
  openNdjsonSink,
  type SiteSink,
  type StateStore,
} from '@usp-ts/batch';
import { InvalidOptionError } from '@usp-ts/core';
import { UsageError } from './args.js';
import { loadOptionalPackage } from './optional-package.js';

// The backends `usp batch` and `usp worker` open from `--out` and `--state`, through batch's one
// resolver (`openBackend`): a new result store or state store is one driver added to a list
// below, and neither command sniffs a scheme of its own.

/** What opening a state store may wait on. */
export interface StateContext {
  /** Stops the start-up check of a server (a Redis that does not answer). */
  readonly signal?: AbortSignal;
}

/** How `--out` is opened. */
export interface OutputContext extends StateContext {
  /** `--state`, when given. */
  readonly state?: string;
  /** Go on with the run the output holds (`--resume`); `'if-any'`: when it holds one (a restarted worker). */
  readonly resume: boolean | 'if-any';
  /** The writer's own part of the output (a worker's id: `DIR/<id>/` for files). */
  readonly writer?: string;
  readonly gzip?: boolean;
  /** A queue's void copies (see `openNdjsonSink`). */
  readonly voidedCopies?: (tokens: readonly string[]) => Promise<ReadonlySet<string>>;
  readonly onDropped?: (sites: readonly string[]) => void;
}

/** Where a run's rows and state go, opened together and closed together. */
export interface RunOutput {
  /** Where the rows go, for messages: the file, the directory, or the URL without its password. */
  readonly where: string;
  readonly sink: SiteSink & { readonly done: ReadonlySet<string>; close(): Promise<void> };
  readonly state: StateStore | null;
  /**
   * Closes the sink, then the state (the store's file with them, for an SQLite `--out`).
   * `ended: false`: the run stopped before its end, and a store that records runs leaves it open
   * for `--resume`.
   */
  close(options?: { readonly ended?: boolean }): Promise<void>;
}

/** The SQLite state store is loaded only when asked for: a native module nobody else needs. */
async function sqliteState(path: string): Promise<StateStore> {
  const { sqliteStateStore } = await loadOptionalPackage(
    '@usp-ts/state-sqlite',
    '--state FILE',
    () => import('@usp-ts/state-sqlite'),
  );
  return sqliteStateStore(path);
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

/** A URL as it may be shown: without the password it carries. */
export const redactPassword = (url: string): string => url.replace(/\/\/([^@/:]*):[^@/]*@/, '//$1@');

/** A PostgreSQL store as messages name it (`undefined`: the PG* variables' database). */
export const shownPostgres = (url: string | undefined): string =>
  url === undefined ? 'postgres: (PG* variables)' : redactPassword(url);

/** A plain path names an SQLite file by its extension; any other path is a directory. */
const isSqliteFile = (spec: BackendSpec): boolean =>
  spec.scheme === 'sqlite' || /\.(sqlite3?|db)$/i.test(spec.location);

/** `--out` of `usp batch` and `usp worker`. */
export const OUTPUT_DRIVERS: readonly BackendDriver<RunOutput, OutputContext>[] = [
  {
    // The rows and the state in one file, each site's rows and next state in one transaction.
    schemes: ['sqlite', ''],
    forms: ['FILE.sqlite', 'FILE.db', 'sqlite:FILE'],
    matches: isSqliteFile,
    async open(spec, context) {
      if (context.state !== undefined) {
        throw new InvalidOptionError(
          'state',
          `--out ${spec.text} keeps the state in the same file: leave out --state`,
        );
      }
      if (context.gzip === true) {
        throw new InvalidOptionError('gzip', `is for NDJSON files, not --out ${spec.text}`);
      }
      const { openSqliteStore } = await loadOptionalPackage(
        '@usp-ts/state-sqlite',
        `--out ${spec.text}`,
        () => import('@usp-ts/state-sqlite'),
      );
      const store = openSqliteStore(spec.location, { resume: context.resume === true });
      return {
        where: spec.location,
        sink: store.sink,
        state: store.state,
        close: (options) => store.close(options),
      };
    },
  },
  {
    // Rows and state in one database, each site's in one transaction; a worker files a site under
    // its queue's run. `postgres:` alone connects with the PG* variables.
    schemes: ['postgres', 'postgresql'],
    forms: ['postgres://USER@HOST[:PORT]/DB', 'postgres:'],
    async open(spec, context) {
      const url = spec.location === '' ? undefined : spec.text;
      if (context.state !== undefined && context.state !== spec.text) {
        throw new InvalidOptionError(
          'state',
          `--out ${redactPassword(spec.text)} keeps the state in the same database: leave out --state (or give the same URL)`,
        );
      }
      if (context.gzip === true) {
        throw new InvalidOptionError('gzip', `is for NDJSON files, not --out ${redactPassword(spec.text)}`);
      }
      if (context.resume === true) {
        throw new InvalidOptionError(
          'resume',
          `is for files: each usp batch into ${redactPassword(spec.text)} is a run of its own, and a site committed there is whole`,
        );
      }
      const { openPostgresStore } = await loadOptionalPackage(
        '@usp-ts/store-postgres',
        `--out ${redactPassword(spec.text)}`,
        () => import('@usp-ts/store-postgres'),
      );
      const store = await openPostgresStore(url !== undefined ? { url } : {});
      return {
        where: shownPostgres(url),
        sink: store.sink,
        state: store.state,
        close: () => store.close(),
      };
    },
  },
  {
    schemes: [''],
    forms: ['DIR'],
    async open(spec, context) {
      const dir = context.writer === undefined ? spec.location : join(spec.location, context.writer);
      const state =
        context.state === undefined
          ? null
          : await openBackend(context.state, STATE_DRIVERS, context, 'state');
      let sink: Awaited<ReturnType<typeof openNdjsonSink>>;
      try {
        sink = await openNdjsonSink({
          dir,
          ...(context.gzip !== undefined ? { gzip: context.gzip } : {}),
          // A writer restarted under its id goes on with its own files (cutting what a kill left).
          resume: context.resume === 'if-any' ? existsSync(join(dir, 'journal.ndjson')) : context.resume,
          // A worker's output never recognises the shared state's marks (its sites are fenced).
          state: context.writer === undefined ? state : null,
          ...(context.voidedCopies !== undefined ? { voidedCopies: context.voidedCopies } : {}),
          ...(context.onDropped !== undefined ? { onDropped: context.onDropped } : {}),
        });
      } catch (error) {
        await state?.close();
        throw error;
      }
      return {
        where: dir,
        sink,
        state,
        async close() {
          try {
            await sink.close();
          } finally {
            await state?.close();
          }
        },
      };
    },
  },
];

/** A spec no driver takes (or options that do not go together) is a usage error, said in one line. */
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

/** Opens `--out SPEC` and, with it, `--state` (`context.state`). */
export function openRunOutput(out: string, context: OutputContext, usage: string): Promise<RunOutput> {
  return asUsage(() => openBackend(out, OUTPUT_DRIVERS, context, 'out'), usage);
}
