import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, ftruncateSync, openSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { errorText } from '@usp-ts/core';
import { HeldRows } from './held-rows.js';
import { makeDirectory } from './make-directory.js';
import type { Mutable } from './mutable.js';
import { OutputError } from './output-error.js';
import { GroupSync, writeAll } from './output-files.js';
import { lockOutput, type OutputLock } from './output-lock.js';
import type { SiteCopy } from './queue-port.js';
import type { PageRow, SitemapRow, SiteResult } from './rows.js';
import { type JournalContents, type JournalEntry, RunJournal, readJournal } from './run-journal.js';
import type { CommitOptions, SiteOutput, SiteSink } from './site-sink.js';
import { SpillFiles } from './spill-files.js';
import { type RunMark, type StateStore, StateStoreError } from './state-store.js';
import { copyTokens, dropCopies, finishDrop, type RunFiles } from './void-copies.js';

export interface NdjsonSinkOptions {
  /** The output directory (created when missing). */
  readonly dir: string;
  /** Write `.ndjson.gz` (gzip members of at most 1 MiB of a committed site; `zcat` and `gunzip` read them as one). */
  readonly gzip?: boolean;
  /**
   * Go on with the run the directory holds: sites in its journal are done, output past the last
   * committed site is cut off. Without it, a directory that holds a run is refused.
   */
  readonly resume?: boolean;
  /** The state the run saves to: a site whose state was saved just before a kill counts as done. */
  readonly state?: StateStore | null;
  /** Page rows a site holds in memory before they go to a temp file (default 1,024). */
  readonly holdRows?: number;
  /**
   * For a run whose sites are queue jobs (each commit fenced: `CommitOptions.fence`): given the tokens of
   * the copies in the journal, says which are void (the site was walked again elsewhere after this
   * copy was written). On resume and on close those copies are cut out of the files; `onDropped`
   * hears of them. A lookup that fails is left to the next close or resume.
   */
  readonly voidedCopies?: (tokens: readonly string[]) => Promise<ReadonlySet<string>>;
  /** The sites whose void copies were just cut out. */
  readonly onDropped?: (sites: readonly string[]) => void;
}

/** The NDJSON sink of a run (`openNdjsonSink`). */
export interface NdjsonSink extends SiteSink {
  readonly runId: string;
  /** Sites (and invalid lines) committed by an earlier part of this run (as it was opened). */
  readonly done: ReadonlySet<string>;
  /** Writes out what is pending, syncs and closes the files, and unlocks the directory. */
  close(): Promise<void>;
}

const FILES = ['pages', 'sitemaps', 'sites'] as const;
type FileName = (typeof FILES)[number];
type Offsets = Record<FileName, number>;

/**
 * Opens the output of a run: `pages.ndjson`, `sitemaps.ndjson`, `sites.ndjson` (`.gz` with
 * `gzip`) and `journal.ndjson` in `dir`, locked for this writer (`lockOutput`: a second writer
 * is refused, naming this one). A site's lines are held (in memory, then a temp file under
 * `dir/.partial`) until its walk ends, then appended to the three files at once; once every byte
 * is written and synced to disk, the state is saved and the journal line written. A kill at any
 * moment, or a full disk, leaves either all of a site or nothing that a resumed run keeps; after
 * a failed write nothing more is committed (the commit rejects with an `OutputError`).
 */
export async function openNdjsonSink(options: NdjsonSinkOptions): Promise<NdjsonSink> {
  const dir = options.dir;
  try {
    makeDirectory(dir);
  } catch (cause) {
    throw new OutputError(`cannot create the output directory ${dir}: ${errorText(cause)}`, dir, { cause });
  }
  const lock = lockOutput(dir);
  try {
    const run = await openRun(options);
    return sinkOver(run, options, lock);
  } catch (err) {
    lock.release();
    throw err;
  }
}

/** A run's directory, checked, with what earlier parts of the run committed. */
interface OpenedRun {
  readonly dir: string;
  readonly runId: string;
  readonly gzip: boolean;
  readonly paths: Record<FileName, string>;
  readonly journalPath: string;
  readonly existing: JournalContents | null;
  readonly done: Set<string>;
  readonly offsets: Offsets;
  /** A site whose state was saved but whose journal line a kill prevented. */
  readonly recovered: JournalEntry | null;
  readonly filesOf: (gz: boolean) => RunFiles;
}

function runFilesOf(dir: string, journal: string, gz: boolean): RunFiles {
  return {
    dir,
    journal,
    outputs: Object.fromEntries(FILES.map((f) => [f, join(dir, f + (gz ? '.ndjson.gz' : '.ndjson'))])),
  };
}

/**
 * Cuts the copies that a later try of their queue job made void. A failed lookup (the queue's
 * Redis away) is not this run's end: resume and close try again.
 */
async function dropVoided(options: NdjsonSinkOptions, journal: JournalContents | null): Promise<boolean> {
  if (journal === null || options.voidedCopies === undefined) return false;
  const tokens = copyTokens(journal);
  if (tokens.length === 0) return false;
  let voided: ReadonlySet<string>;
  try {
    voided = await options.voidedCopies(tokens);
  } catch {
    return false;
  }
  let dropped: string[];
  try {
    const journalPath = join(options.dir, 'journal.ndjson');
    dropped = dropCopies(runFilesOf(options.dir, journalPath, journal.header.gzip), journal, voided);
  } catch (cause) {
    throw new OutputError(`cannot drop void copies in ${options.dir}: ${errorText(cause)}`, options.dir, {
      cause,
    });
  }
  if (dropped.length > 0) options.onDropped?.(dropped);
  return dropped.length > 0;
}

/** Reads and checks the journal of `dir`, finishes what a kill interrupted, and says what is done. */
async function openRun(options: NdjsonSinkOptions): Promise<OpenedRun> {
  const dir = options.dir;
  const journalPath = join(dir, 'journal.ndjson');
  let existing = readJournal(journalPath);
  const filesOf = (gz: boolean): RunFiles => runFilesOf(dir, journalPath, gz);
  if (!options.resume && (existing !== null || existsSync(journalPath))) {
    throw new OutputError(
      `${dir} holds a run already (journal.ndjson): add --resume to go on with it, or choose another output directory`,
      dir,
    );
  }
  if (options.resume && existing === null && existsSync(journalPath)) {
    throw new OutputError(`${journalPath} is not a run journal; nothing was changed`, journalPath);
  }
  const gzip = existing?.header.gzip ?? options.gzip ?? false;
  if (existing !== null && options.gzip !== undefined && options.gzip !== gzip) {
    throw new OutputError(
      `the run in ${dir} was started ${gzip ? 'with' : 'without'} --gzip; resume it the same way`,
      dir,
    );
  }
  if (existing !== null && options.resume) {
    let finished = false;
    try {
      finished = finishDrop(filesOf(existing.header.gzip));
    } catch (cause) {
      throw new OutputError(`cannot finish dropping void copies in ${dir}: ${errorText(cause)}`, dir, {
        cause,
      });
    }
    if (finished) existing = readJournal(journalPath);
    if (await dropVoided(options, existing)) existing = readJournal(journalPath);
  }
  const runId = existing?.header.runId ?? randomUUID();
  const paths = filesOf(gzip).outputs as Record<FileName, string>;
  const done = new Set<string>();
  let offsets: Offsets = { pages: 0, sitemaps: 0, sites: 0 };
  for (const e of existing?.entries ?? []) {
    done.add(e.site);
    offsets = { ...offsets, ...(e.offsets as Offsets) };
  }
  const sizeOf = (p: string): number => (existsSync(p) ? statSync(p).size : 0);
  // A site whose state was saved after its lines were written and synced, but killed before its
  // journal line: its lines are whole, so it is done and its line is written now.
  let recovered: JournalEntry | null = null;
  const mark = existing !== null && options.state ? await options.state.lastMark(runId) : null;
  if (mark !== null && !done.has(mark.site)) {
    const o = mark.offsets as Offsets;
    const ahead = FILES.every((f) => o[f] >= offsets[f] && o[f] <= sizeOf(paths[f]));
    if (ahead) {
      done.add(mark.site);
      offsets = { ...o };
      recovered = { type: 'site', site: mark.site, status: 'recovered', offsets: o };
    }
  }
  for (const f of FILES) {
    if (existing !== null && sizeOf(paths[f]) < offsets[f]) {
      throw new OutputError(`${paths[f]} is shorter than its journal says; nothing was changed`, paths[f]);
    }
  }
  return { dir, runId, gzip, paths, journalPath, existing, done, offsets, recovered, filesOf };
}

/** Opens the journal and the three files for appending, each cut at the last committed site. */
function openFiles(run: OpenedRun): { journal: RunJournal; fds: Record<FileName, number> } {
  const fds = {} as Record<FileName, number>;
  let journal: RunJournal | null = null;
  try {
    journal =
      run.existing === null
        ? RunJournal.create(run.journalPath, {
            type: 'run',
            runId: run.runId,
            startedAt: new Date().toISOString(),
            gzip: run.gzip,
          })
        : RunJournal.reopen(run.journalPath, run.existing.goodBytes);
    for (const f of FILES) {
      const fd = openSync(run.paths[f], run.existing === null ? 'w' : 'r+');
      // Lines of a site that was not committed are cut off.
      ftruncateSync(fd, run.offsets[f]);
      closeSync(fd);
      fds[f] = openSync(run.paths[f], 'a');
    }
    if (run.recovered !== null) journal.append(run.recovered);
    return { journal, fds };
  } catch (cause) {
    journal?.close();
    for (const f of FILES) if (fds[f] !== undefined) closeSync(fds[f]);
    throw new OutputError(writeFailureText(run.dir, cause), run.dir, { cause });
  }
}

function writeFailureText(dir: string, cause: unknown): string {
  if ((cause as NodeJS.ErrnoException)?.code === 'ENOSPC') {
    return `no space left on the device of ${dir}: the run stopped; the sites written before are kept`;
  }
  return `cannot write to ${dir}: ${errorText(cause)}`;
}

/** What a commit hands to the writer: the site's bytes, in the order they go out. */
interface SiteBytes {
  readonly pages: HeldRows;
  readonly sitemaps: string;
  readonly site: string;
}

/** The sink proper: commits sites in order, each written, synced, saved, then journalled. */
function sinkOver(run: OpenedRun, options: NdjsonSinkOptions, lock: OutputLock): NdjsonSink {
  const { dir, runId, gzip } = run;
  const { journal, fds } = openFiles(run);
  const partialDir = join(dir, '.partial');
  rmSync(partialDir, { recursive: true, force: true });
  const holdRows = options.holdRows ?? 1_024;
  const sync = new GroupSync([...FILES.map((f) => fds[f]), journal.fd]);
  /** Where each file ends after the last site written whole. */
  let offsets: Offsets = { ...run.offsets };
  const spills = new SpillFiles(partialDir);
  let writes: Promise<unknown> = Promise.resolve();
  let finishes: Promise<unknown> = Promise.resolve();
  /** Set by the first failure: nothing is written after it. */
  let failed: OutputError | null = null;
  /** Set when a site's state or journal line failed: no later site may be finished either. */
  let unfinished: unknown = null;
  let closed = false;

  const fail = (cause: unknown): OutputError => {
    failed ??=
      cause instanceof OutputError ? cause : new OutputError(writeFailureText(dir, cause), dir, { cause });
    return failed;
  };

  /** Appends one site to the three files; the offsets move only once all of it is written. */
  const writeSite = (bytes: SiteBytes): { offsets: Offsets; mark: number } => {
    if (closed) throw new OutputError('the output was closed before the site was committed', dir);
    if (failed !== null) throw failed;
    // Object.assign rather than spreads, here and below: a spread's copy gets a hidden class of
    // its own each time (site-walk.ts, `walkOptions`), and every later read of it misses its cache.
    const next = Object.assign({}, offsets);
    const append = (f: FileName, data: Uint8Array | string): void => {
      if (data.length === 0) return;
      const out = gzip ? gzipSync(data) : data;
      writeAll(fds[f], out);
      sync.touch(fds[f]);
      next[f] += typeof out === 'string' ? Buffer.byteLength(out) : out.length;
    };
    try {
      bytes.pages.drain((piece) => append('pages', piece));
      append('sitemaps', bytes.sitemaps);
      append('sites', bytes.site);
    } catch (cause) {
      bytes.pages.drop();
      // Cut what was written of this site: it frees the space it took, and a resumed run would.
      for (const f of FILES) {
        try {
          ftruncateSync(fds[f], offsets[f]);
        } catch {
          // The resumed run cuts it.
        }
      }
      throw fail(cause);
    }
    offsets = next;
    return { offsets: next, mark: sync.wrote() };
  };

  const finishSite = async (
    result: SiteResult,
    written: { offsets: Offsets; mark: number },
    saveState: ((mark: RunMark) => Promise<void>) | undefined,
    copy: SiteCopy | undefined,
  ): Promise<void> => {
    if (unfinished !== null) throw unfinished;
    try {
      // The state says the site's pages were delivered: only once they are on disk.
      try {
        await sync.upTo(written.mark);
      } catch (cause) {
        throw fail(cause);
      }
      await saveState?.({ runId, site: result.site, offsets: Object.assign({}, written.offsets) });
      const entry: Mutable<JournalEntry> = {
        type: 'site',
        site: result.site,
        status: result.status,
        offsets: Object.assign({}, written.offsets),
      };
      if (copy !== undefined) {
        entry.token = copy.token;
        if (copy.voids.length > 0) entry.voids = copy.voids;
      }
      try {
        journal.append(entry);
      } catch (cause) {
        throw fail(cause);
      }
      sync.touch(journal.fd);
      sync.wrote();
    } catch (err) {
      // The site's bytes are in the files without its journal line: nothing may follow them. A
      // state store's own failure is said as it is; anything else is this output's failure.
      unfinished =
        err instanceof OutputError || err instanceof StateStoreError
          ? err
          : new OutputError(`cannot finish ${result.site} in ${dir}: ${errorText(err)}`, dir, { cause: err });
      if (failed === null) fail(unfinished);
      throw unfinished;
    }
  };

  return {
    runId,
    done: run.done,
    begin(): SiteOutput {
      const pages = new HeldRows(spills, holdRows);
      const sitemaps: string[] = [];
      return {
        page(row: PageRow, json?: string) {
          pages.add(json ?? JSON.stringify(row));
        },
        pageLine(json: string) {
          pages.add(json);
        },
        sitemap(row: SitemapRow) {
          sitemaps.push(`${JSON.stringify(row)}\n`);
        },
        commit(result: SiteResult, options?: CommitOptions) {
          const bytes: SiteBytes = {
            pages,
            sitemaps: sitemaps.join(''),
            site: `${JSON.stringify(result)}\n`,
          };
          sitemaps.length = 0;
          // Sites are written one after another, and finished (state, journal) in the same order;
          // the next site's bytes go out while this one waits for its sync. The fence comes right
          // before the bytes: a stale copy writes nothing (and fails only its own commit).
          const written = writes.then(async () => {
            let copy: SiteCopy | undefined;
            try {
              copy = await options?.fence?.();
            } catch (error) {
              pages.drop();
              throw error;
            }
            const w = writeSite(bytes);
            return { offsets: w.offsets, mark: w.mark, copy };
          });
          writes = written.catch(() => {});
          const finished = Promise.all([written, finishes]).then(([w]) =>
            finishSite(result, w, options?.saveState, w.copy),
          );
          finishes = finished.catch(() => {});
          return finished;
        },
        discard() {
          pages.drop();
          sitemaps.length = 0;
        },
      };
    },
    async close() {
      if (closed) return;
      await writes;
      await finishes;
      closed = true;
      try {
        try {
          await sync.all();
        } catch (cause) {
          throw fail(cause);
        } finally {
          for (const f of FILES) closeSync(fds[f]);
          journal.close();
          spills.close();
          rmSync(partialDir, { recursive: true, force: true });
        }
        // A copy may have become void while this process ran (its lock lapsed and another worker
        // walked the site): cut it now rather than at the next resume.
        if (options.voidedCopies !== undefined) await dropVoided(options, readJournal(run.journalPath));
      } finally {
        lock.release();
      }
    },
  };
}
