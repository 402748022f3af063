import {
  type BackendDriver,
  openBackend,
  type PageRow,
  type PageRowFilter,
  type RunSummaryRows,
} from '@usp-ts/batch';
import { InvalidOptionError } from '@usp-ts/core';
import { UsageError } from './args.js';
import { shownPostgres } from './backends.js';
import { loadOptionalPackage } from './optional-package.js';

// The result stores `usp export` and `usp report` read, resolved as `--out` is (batch's
// `openBackend` over a list of drivers): a store of a scheme no driver takes is one usage line
// naming the forms that are, never an "SQLite file" that does not exist.

/** What the commands read from a result store. */
export interface StoreReader {
  /** The store as messages name it (a URL without its password). */
  readonly shown: string;
  /** The page rows of one run, filtered; streamed. */
  pageRows(filter: PageRowFilter): AsyncIterable<PageRow> | Iterable<PageRow>;
  /** The counts of one run (`latest` when not given). */
  runSummary(run: string | undefined): Promise<RunSummaryRows>;
}

/** Which command reads, for the line saying an optional package is missing. */
interface ReaderContext {
  readonly command: string;
}

const STORE_READERS: readonly BackendDriver<StoreReader, ReaderContext>[] = [
  {
    schemes: ['sqlite', ''],
    forms: ['FILE.sqlite', 'sqlite:FILE'],
    async open(spec, { command }) {
      const store = await loadOptionalPackage(
        '@usp-ts/state-sqlite',
        `${command} of an SQLite store`,
        () => import('@usp-ts/state-sqlite'),
      );
      const path = spec.location;
      return {
        shown: path,
        pageRows: (filter) => store.readSqlitePageRows(path, filter),
        runSummary: async (run) => store.readSqliteRunSummary(path, run),
      };
    },
  },
  {
    // `postgres:` alone connects with the PG* variables.
    schemes: ['postgres', 'postgresql'],
    forms: ['postgres://USER@HOST[:PORT]/DB', 'postgres:'],
    async open(spec, { command }) {
      const store = await loadOptionalPackage(
        '@usp-ts/store-postgres',
        `${command} of a PostgreSQL store`,
        () => import('@usp-ts/store-postgres'),
      );
      const url = spec.location === '' ? undefined : spec.text;
      return {
        shown: shownPostgres(url),
        pageRows: (filter) => store.readPageRows(url, filter),
        runSummary: (run) => store.readRunSummary(url, run),
      };
    },
  },
];

/** Opens the result store `spec` names; a spec no driver takes is a usage error (exit 2). */
export async function openStoreReader(spec: string, command: string, usage: string): Promise<StoreReader> {
  try {
    return await openBackend(spec, STORE_READERS, { command }, 'store');
  } catch (err) {
    if (err instanceof InvalidOptionError) {
      throw new UsageError(`argument store: ${err.message.replace(/^Option \S+: /, '')}`, usage);
    }
    throw err;
  }
}

/** Whether `value` names a store by a scheme (`sqlite:…`, `postgres://…`, or one no driver takes). */
export function hasScheme(value: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]+:/.test(value);
}
