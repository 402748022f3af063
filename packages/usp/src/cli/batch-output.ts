import { type BatchSink, openNdjsonSink } from '@usp-ts/batch';
import type { StateStore } from '@usp-ts/core';
import { UsageError } from './args.js';
import { loadOptionalPackage } from './optional-package.js';
import { openState } from './site-walk.js';

/** Where a local batch's rows and state go, as `--out`, `--state`, `--gzip` and `--resume` say. */
export interface BatchOutput {
  readonly sink: BatchSink & { readonly done: ReadonlySet<string>; close(): Promise<void> };
  readonly state: StateStore | null;
  /** Closes the sink, then the state (the store's file with them, for an SQLite `--out`). */
  close(): Promise<void>;
}

/** `--out sqlite:FILE`, or a FILE named `*.sqlite` / `*.sqlite3` / `*.db`: the SQLite result store. */
export function sqliteOutPath(out: string): string | null {
  if (out.startsWith('sqlite:')) return out.slice('sqlite:'.length);
  return /\.(sqlite3?|db)$/i.test(out) ? out : null;
}

/**
 * Opens the output of `usp batch`: a directory of NDJSON files (with the `--state` file, when
 * given), or one SQLite file holding the rows and the state together (its own state: `--state` is
 * refused beside it, as is `--gzip`).
 */
export async function openBatchOutput(o: {
  readonly out: string;
  readonly statePath: string | undefined;
  readonly gzip: boolean;
  readonly resume: boolean;
  readonly usage: string;
}): Promise<BatchOutput> {
  const sqlite = sqliteOutPath(o.out);
  if (sqlite !== null) {
    if (o.statePath !== undefined) {
      throw new UsageError(`--out ${o.out} keeps the state in the same file: leave out --state`, o.usage);
    }
    if (o.gzip) throw new UsageError(`--gzip is for NDJSON files, not --out ${o.out}`, o.usage);
    const { openSqliteStore } = await loadOptionalPackage(
      '@usp-ts/state-sqlite',
      `--out ${o.out}`,
      () => import('@usp-ts/state-sqlite'),
    );
    const store = openSqliteStore(sqlite, { resume: o.resume });
    return { sink: store.sink, state: store.state, close: () => store.close() };
  }
  const state = o.statePath !== undefined ? await openState(o.statePath) : null;
  let sink: Awaited<ReturnType<typeof openNdjsonSink>>;
  try {
    sink = await openNdjsonSink({ dir: o.out, ...(o.gzip ? { gzip: true } : {}), resume: o.resume, state });
  } catch (error) {
    await state?.close();
    throw error;
  }
  return {
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
}
