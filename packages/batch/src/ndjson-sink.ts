import { randomUUID } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fdatasync,
  ftruncateSync,
  openSync,
  readSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { errorText } from '@usp-ts/core';
import { makeDirectory } from './make-directory.js';
import { OutputError } from './output-error.js';
import type { PageRow, SitemapRow, SiteResult } from './rows.js';
import { type JournalContents, type JournalEntry, RunJournal, readJournal } from './run-journal.js';
import type { CommitOptions, SiteCopy, SiteOutput, SiteSink } from './site-sink.js';
import type { StateStore } from './state-store.js';
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
  /** Sites (and invalid lines) committed by an earlier part of this run. */
  readonly done: ReadonlySet<string>;
  /** Writes out what is pending and closes the files. */
  close(): Promise<void>;
}

const FILES = ['pages', 'sitemaps', 'sites'] as const;
type FileName = (typeof FILES)[number];

const FSYNC_EVERY_MS = 2_000;
/** Characters of rows turned into one Buffer while a site is walked. */
const PIECE_CHARS = 64 * 1024;
/** Bytes read at a time when a spilled site is appended to the output. */
const COPY_BYTES = 1024 * 1024;

/**
 * Opens the output of a run: `pages.ndjson`, `sitemaps.ndjson`, `sites.ndjson` (`.gz` with
 * `gzip`) and `journal.ndjson` in `dir`. A site's lines are held (in memory, then a temp file
 * under `dir/.partial`) until its walk ends, then appended to the three files at once and the
 * journal line written after them; a kill at any moment leaves either all of a site or nothing
 * that a resumed run keeps. Writes are plain `write`s (safe against a killed process: the
 * kernel has them); the files are fsync'd every 2 s and on close, for power loss.
 */
export async function openNdjsonSink(options: NdjsonSinkOptions): Promise<NdjsonSink> {
  const dir = options.dir;
  const journalPath = join(dir, 'journal.ndjson');
  try {
    makeDirectory(dir);
  } catch (cause) {
    throw new OutputError(`cannot create the output directory ${dir}: ${errorText(cause)}`, dir, { cause });
  }
  let existing = readJournal(journalPath);
  const filesOf = (gz: boolean): RunFiles => ({
    dir,
    journal: journalPath,
    outputs: Object.fromEntries(FILES.map((f) => [f, join(dir, f + (gz ? '.ndjson.gz' : '.ndjson'))])),
  });
  // A failed lookup (the queue's Redis away) is not this run's end: resume and close try again.
  const dropVoided = async (journal: JournalContents | null) => {
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
      dropped = dropCopies(filesOf(journal.header.gzip), journal, voided);
    } catch (cause) {
      throw new OutputError(`cannot drop void copies in ${dir}: ${errorText(cause)}`, dir, { cause });
    }
    if (dropped.length > 0) options.onDropped?.(dropped);
    return dropped.length > 0;
  };
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
    if (await dropVoided(existing)) existing = readJournal(journalPath);
  }
  const runId = existing?.header.runId ?? randomUUID();
  const ext = gzip ? '.ndjson.gz' : '.ndjson';
  const paths = Object.fromEntries(FILES.map((f) => [f, join(dir, f + ext)])) as Record<FileName, string>;
  const done = new Set<string>();
  let offsets: Record<FileName, number> = { pages: 0, sitemaps: 0, sites: 0 };
  for (const e of existing?.entries ?? []) {
    done.add(e.site);
    offsets = { ...offsets, ...(e.offsets as Record<FileName, number>) };
  }
  const sizeOf = (p: string): number => (existsSync(p) ? statSync(p).size : 0);
  // A site whose state was saved after its lines were written, but killed before its journal
  // line: its lines are whole, so it is done and its line is written now.
  let recovered: JournalEntry | null = null;
  const mark = existing !== null && options.state ? await options.state.lastMark(runId) : null;
  if (mark !== null && !done.has(mark.site)) {
    const o = mark.offsets as Record<FileName, number>;
    const ahead = FILES.every((f) => o[f] >= offsets[f] && o[f] <= sizeOf(paths[f]));
    if (ahead) {
      done.add(mark.site);
      offsets = { ...o };
      recovered = { type: 'site', site: mark.site, status: 'recovered', offsets: o };
    }
  }
  let journal: RunJournal;
  const fds = {} as Record<FileName, number>;
  try {
    for (const f of FILES) {
      if (existing !== null && sizeOf(paths[f]) < offsets[f]) {
        throw new OutputError(`${paths[f]} is shorter than its journal says; nothing was changed`, paths[f]);
      }
    }
    journal =
      existing === null
        ? RunJournal.create(journalPath, { type: 'run', runId, startedAt: new Date().toISOString(), gzip })
        : RunJournal.reopen(journalPath, existing.goodBytes);
    for (const f of FILES) {
      const fd = openSync(paths[f], existing === null ? 'w' : 'r+');
      // Lines of a site that was not committed are cut off.
      ftruncateSync(fd, offsets[f]);
      closeSync(fd);
      fds[f] = openSync(paths[f], 'a');
    }
  } catch (cause) {
    if (cause instanceof OutputError) throw cause;
    throw new OutputError(`cannot write to ${dir}: ${errorText(cause)}`, dir, { cause });
  }
  if (recovered !== null) journal.append(recovered);
  const partialDir = join(dir, '.partial');
  rmSync(partialDir, { recursive: true, force: true });
  const holdRows = options.holdRows ?? 1_024;
  let spills = 0;
  let chain: Promise<void> = Promise.resolve();
  let dirty = false;
  let closed = false;
  // Syncs run on libuv's pool, the four files at once: a sync blocks for milliseconds up to a
  // disk's latency, and on this thread the timer's held every site's walk for that long (on a
  // no-change run of 1,000 sites, about 5 % of the thread's time), and close's four in a row
  // were 18-38 ms at the end of that run. `close` waits for the timer's before its own.
  const syncAll = (onError: 'ignore' | 'reject'): Promise<void> =>
    Promise.all(
      [...FILES.map((f) => fds[f]), journal.fd].map(
        (fd) =>
          new Promise<void>((resolve, reject) => {
            // The timer's failure is reported by the next write, or by the sync of close.
            fdatasync(fd, (err) => (err !== null && onError === 'reject' ? reject(err) : resolve()));
          }),
      ),
    ).then(() => {});
  let syncing: Promise<void> | null = null;
  const syncInBackground = (): void => {
    if (!dirty || syncing !== null) return;
    dirty = false;
    syncing = syncAll('ignore').then(() => {
      syncing = null;
    });
  };
  const timer = setInterval(syncInBackground, FSYNC_EVERY_MS);
  timer.unref();

  const append = (f: FileName, text: string | Uint8Array): void => {
    if (text.length === 0) return;
    const data = gzip ? gzipSync(text) : typeof text === 'string' ? Buffer.from(text) : text;
    writeSync(fds[f], data);
    offsets[f] += data.length;
  };
  /** Appends a spilled file in 1 MiB pieces (with gzip, one member each): never all of it in memory. */
  const copyInto = (f: FileName, fd: number): void => {
    const piece = Buffer.allocUnsafe(COPY_BYTES);
    for (;;) {
      const n = readSync(fd, piece, 0, COPY_BYTES, null);
      if (n === 0) return;
      append(f, piece.subarray(0, n));
    }
  };

  return {
    runId,
    done,
    begin(): SiteOutput {
      // Rows become bytes in 64 KiB pieces as they come: a site's held rows then live outside
      // the JS heap, and short-lived strings die young instead of filling the old generation
      // (held as strings, one 50,000-page site took the process from 90 to 180 MB).
      let text = '';
      let chunks: Buffer[] = [];
      let heldRows = 0;
      let spill: { path: string; fd: number } | null = null;
      const sitemaps: string[] = [];
      const flushHeld = (): void => {
        if (text !== '') chunks.push(Buffer.from(text));
        text = '';
        if (spill === null) {
          makeDirectory(partialDir);
          const path = join(partialDir, `${process.pid}-${spills++}.ndjson`);
          spill = { path, fd: openSync(path, 'w') };
        }
        for (const c of chunks) writeSync(spill.fd, c);
        chunks = [];
        heldRows = 0;
      };
      const dropSpill = (): void => {
        if (spill === null) return;
        closeSync(spill.fd);
        rmSync(spill.path, { force: true });
        spill = null;
      };
      const dropHeld = (): void => {
        text = '';
        chunks = [];
        sitemaps.length = 0;
        dropSpill();
      };
      return {
        page(row: PageRow, json?: string) {
          text += `${json ?? JSON.stringify(row)}\n`;
          if (text.length >= PIECE_CHARS) {
            chunks.push(Buffer.from(text));
            text = '';
          }
          if (++heldRows >= holdRows) flushHeld();
        },
        sitemap(row: SitemapRow) {
          sitemaps.push(`${JSON.stringify(row)}\n`);
        },
        commit(result: SiteResult, commitOptions?: CommitOptions) {
          const run = async (): Promise<void> => {
            if (closed) throw new OutputError('the output was closed before the site was committed', dir);
            let copy: SiteCopy | undefined;
            try {
              copy = await commitOptions?.fence?.();
            } catch (error) {
              // A stale copy (another try owns the site): nothing of it is kept.
              dropHeld();
              throw error;
            }
            if (text !== '') chunks.push(Buffer.from(text));
            text = '';
            try {
              if (spill !== null) {
                const s = spill as { path: string; fd: number };
                closeSync(s.fd);
                s.fd = openSync(s.path, 'r');
                copyInto('pages', s.fd);
                dropSpill();
              }
              append('pages', Buffer.concat(chunks));
              chunks = [];
              append('sitemaps', sitemaps.join(''));
              append('sites', `${JSON.stringify(result)}\n`);
              dirty = true;
            } catch (cause) {
              throw new OutputError(`cannot write to ${dir}: ${errorText(cause)}`, dir, { cause });
            }
            await commitOptions?.saveState?.({ runId, site: result.site, offsets: { ...offsets } });
            journal.append({
              type: 'site',
              site: result.site,
              status: result.status,
              offsets: { ...offsets },
              ...(copy !== undefined ? { token: copy.token } : {}),
              ...(copy !== undefined && copy.voids.length > 0 ? { voids: copy.voids } : {}),
            });
            done.add(result.site);
          };
          const next = chain.then(run);
          chain = next.catch(() => {});
          return next;
        },
        discard: dropHeld,
      };
    },
    async close() {
      if (closed) return;
      await chain;
      closed = true;
      clearInterval(timer);
      await syncing;
      try {
        await syncAll('reject');
      } finally {
        for (const f of FILES) closeSync(fds[f]);
        journal.close();
        rmSync(partialDir, { recursive: true, force: true });
      }
      // A copy may have become void while this process ran (its lock lapsed and another worker
      // walked the site): cut it now rather than at the next resume.
      if (options.voidedCopies !== undefined) await dropVoided(readJournal(journalPath));
    },
  };
}
