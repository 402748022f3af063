import { closeSync, mkdtempSync, openSync, readdirSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import {
  type Alternate,
  type ChangeFrequency,
  type NewsStory,
  type Page,
  type PageExtensions,
  type PageStore,
  type PageWriter,
  SitemapDate,
  type SitemapImage,
  type StoredPages,
  type UrlLines,
} from '@usp-ts/core';
import { type LineBuffers, PAGE_RECORDS_FORMAT, RecordBuffer, readRecords, urlLines } from './records.js';

export interface FilePageStoreOptions {
  /** Parent directory of the store's temp directory (default `os.tmpdir()`). */
  readonly dir?: string;
  /** Bytes a writer buffers before writing them to its file (default 64 KiB). */
  readonly flushBytes?: number;
  /**
   * Bytes read from a file at a time when its pages are iterated (default 256 KiB; a page longer
   * than that is read whole). Loading a 50,000-page file at once cost about 90 MiB more.
   */
  readonly readChunkBytes?: number;
}

export interface FilePageStore extends PageStore {
  /**
   * The store's directory (`usp-pages-<host>-<pid>-XXXXXX`), or `null` while it holds no file:
   * before the first page is written, and again once every file is released.
   */
  readonly dir: string | null;
  /** Removes every file of the store now; pages not loaded yet are gone. */
  dispose(): void;
}

/**
 * Keeps each pages sitemap's pages in a temp file (a binary record a page, see pages/records.ts),
 * and reads them back when `.pages` is accessed. The tree in memory holds only its nodes
 * and a count per sitemap, so memory stays flat however many pages a site has (usp swaps pages
 * to temp files for the same reason). A file is removed when its node's pages are released or
 * the node is garbage-collected, and the directory with its last file; whatever is left goes when
 * the process exits. A process that cannot clean up (killed by a signal, a worker thread
 * terminated, a crash) leaves its directory behind: the next store created on the same host, in
 * any process, removes the directories of processes that no longer run.
 */
export function filePageStore(options: FilePageStoreOptions = {}): FilePageStore {
  const parent = options.dir ?? tmpdir();
  const flushBytes = options.flushBytes ?? 64 * 1024;
  const readChunkBytes = options.readChunkBytes ?? 256 * 1024;
  let dir: string | null = null;
  let seq = 0;
  /** Files of this store not removed yet; the directory goes with the last one. */
  const files = new Set<string>();
  const ensureDir = (): string => {
    if (dir === null) {
      sweepDeadOwners(parent);
      dir = mkdtempSync(join(parent, OWN_PREFIX));
      liveDirs.add(dir);
      registerExitCleanup();
    }
    return dir;
  };
  const removeDir = () => {
    if (dir === null) return;
    rmSync(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
    dir = null;
  };
  const fileGone = (path: string) => {
    if (files.delete(path) && files.size === 0) removeDir();
  };

  return {
    get dir() {
      return dir;
    },
    dispose() {
      files.clear();
      removeDir();
    },
    open(): PageWriter {
      let path: string | null = null;
      let fd: number | null = null;
      const buffer = new RecordBuffer(4096);
      let count = 0;
      const flush = () => {
        if (buffer.size === 0) return;
        if (fd === null) {
          path = join(ensureDir(), `${++seq}.pages`);
          fd = openSync(path, 'w');
          files.add(path);
        }
        writeSync(fd, buffer.take());
      };
      const append = (page: Page) => {
        buffer.append(page, encodePage);
        count++;
        if (buffer.size >= flushBytes) flush();
      };
      return {
        append,
        appendPages(pages, encoded) {
          // A parse worker's batch comes with its records made: copied, not encoded again.
          if (encoded?.format !== PAGE_RECORDS_FORMAT) {
            for (const p of pages) append(p);
            return;
          }
          buffer.appendRecords(encoded.bytes);
          count += pages.length;
          if (buffer.size >= flushBytes) flush();
        },
        close(): StoredPages {
          flush();
          if (fd !== null) closeSync(fd);
          fd = null;
          return storedInFile(path, count, readChunkBytes, fileGone);
        },
      };
    },
  };
}

function storedInFile(
  path: string | null,
  count: number,
  chunkBytes: number,
  gone: (path: string) => void,
): StoredPages {
  if (path === null) return { count: 0, load: () => [] };
  let file: string | null = path;
  function* pages(): Generator<Page, void, undefined> {
    if (file === null) return;
    yield* readRecords(file, chunkBytes, decodePage);
  }
  function* lines(indent: string, stripPrefix: string, buffers?: LineBuffers): UrlLines {
    if (file === null) return;
    yield* urlLines(file, chunkBytes, decodePage, indent, stripPrefix, buffers);
  }
  const stored: StoredPages = {
    get count() {
      return file === null ? 0 : count;
    },
    load: () => Array.from(pages()),
    // Iterable again and again, as an array is.
    iterate: () => ({ [Symbol.iterator]: pages }),
    // For tabtree: no page object is made to print a URL.
    urlLines: (o) => lines(o.indent, o.stripPrefix, o.scratch as LineBuffers | undefined),
    release() {
      if (file === null) return;
      removeFile({ path: file, gone });
      collector.unregister(stored);
      file = null;
    },
  };
  // The held value must not reach `stored`, or it would never be collected.
  collector.register(stored, { path, gone }, stored);
  return stored;
}

interface StoredFile {
  readonly path: string;
  /** Tells the store, which removes its directory with its last file. */
  readonly gone: (path: string) => void;
}

function removeFile(file: StoredFile): void {
  try {
    unlinkSync(file.path);
  } catch {
    // Already gone (the directory was disposed): nothing to free.
  }
  file.gone(file.path);
}

/** A node dropped without `releasePages()` still frees its file once it is collected. */
const collector = new FinalizationRegistry<StoredFile>(removeFile);

/**
 * Directories are named for their owner, `usp-pages-<host>-<pid>-XXXXXX`, so that a later store
 * can tell which ones nobody will clean up: the process is gone. The host keeps a process on
 * another machine (or container) sharing the directory from being taken for a dead one.
 */
const HOST = hostname().replace(/[^A-Za-z0-9.]/g, '_') || 'host';
const OWN_PREFIX = `usp-pages-${HOST}-${process.pid}-`;
const OWNED = /^usp-pages-(.+)-(\d+)-[A-Za-z0-9]{6}$/;
const swept = new Set<string>();

function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the directories that processes of this host left behind, once per parent directory. */
function sweepDeadOwners(parent: string): void {
  if (swept.has(parent)) return;
  swept.add(parent);
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const m = OWNED.exec(name);
    if (m === null || m[1] !== HOST) continue;
    const pid = Number(m[2]);
    if (pid === process.pid || processRuns(pid)) continue;
    try {
      rmSync(join(parent, name), { recursive: true, force: true });
    } catch {
      // Another process removing it at the same time, or not ours to remove: leave it.
    }
  }
}

const liveDirs = new Set<string>();
let exitHookInstalled = false;

function registerExitCleanup(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const d of liveDirs) removeQuietly(d);
    // Every thread of the process ends with it: the directories worker threads left go too.
    if (!isMainThread) return;
    for (const parent of swept) {
      let names: string[];
      try {
        names = readdirSync(parent);
      } catch {
        continue;
      }
      for (const name of names) if (name.startsWith(OWN_PREFIX)) removeQuietly(join(parent, name));
    }
  });
}

function removeQuietly(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    // Exiting anyway; a file the OS holds open cannot be helped.
  }
}

// ---------------------------------------------------------------------------------------------
// A page the binary record does not cover (news, images, alternates, extension data) is stored
// as its JSON line: one JSON array, positional.
// Dates are [epochMs, offsetMinutes, microseconds] so the source offset and "no zone" survive.

type EncodedDate = [number, number | null, number] | null;

function encodeDate(d: SitemapDate | null): EncodedDate {
  return d === null ? null : [d.epochMs, d.offsetMinutes, d.microseconds];
}

function decodeDate(d: EncodedDate): SitemapDate | null {
  return d === null ? null : new SitemapDate(d[0], d[1], d[2]);
}

const DATE_TAG = '$uspDate';

/** Extension data is plain data, but may hold `SitemapDate`s: tag them so they come back as dates. */
function extensionReplacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const original = this[key];
  if (original instanceof SitemapDate) return { [DATE_TAG]: encodeDate(original) };
  return value;
}

function extensionReviver(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === 'object' && DATE_TAG in value) {
    return decodeDate((value as Record<string, EncodedDate>)[DATE_TAG]);
  }
  return value;
}

export function encodePage(p: Page): string {
  const n = p.newsStory;
  const fields: unknown[] = [
    p.url,
    p.priority,
    encodeDate(p.lastModified),
    p.changeFrequency,
    n === null
      ? null
      : [
          n.title,
          encodeDate(n.publishDate),
          n.publicationName,
          n.publicationLanguage,
          n.access,
          n.genres,
          n.keywords,
          n.stockTickers,
        ],
    p.images === null ? null : p.images.map((i) => [i.loc, i.caption, i.geoLocation, i.title, i.license]),
    p.alternates === null ? null : p.alternates.map((a) => [a.hreflang, a.href]),
  ];
  let line = JSON.stringify(fields);
  if (p.extensions !== undefined) {
    line = `${line.slice(0, -1)},${JSON.stringify(p.extensions, extensionReplacer)}]`;
  }
  return line;
}

export function decodePage(line: string): Page {
  // Only lines that carry extension dates pay for the reviver.
  const f = JSON.parse(line, line.includes(DATE_TAG) ? extensionReviver : undefined) as unknown[];
  const n = f[4] as
    | [string, EncodedDate, string | null, string | null, string | null, string[], string[], string[]]
    | null;
  const newsStory: NewsStory | null =
    n === null
      ? null
      : {
          title: n[0],
          publishDate: decodeDate(n[1]),
          publicationName: n[2],
          publicationLanguage: n[3],
          access: n[4],
          genres: n[5],
          keywords: n[6],
          stockTickers: n[7],
        };
  const images = f[5] as (string | null)[][] | null;
  const alternates = f[6] as string[][] | null;
  const page: { -readonly [K in keyof Page]: Page[K] } = {
    url: f[0] as string,
    priority: f[1] as number,
    lastModified: decodeDate(f[2] as EncodedDate),
    changeFrequency: f[3] as ChangeFrequency | null,
    newsStory,
    images:
      images === null
        ? null
        : images.map(
            (i): SitemapImage => ({
              loc: i[0],
              caption: i[1],
              geoLocation: i[2],
              title: i[3],
              license: i[4],
            }),
          ),
    alternates:
      alternates === null ? null : alternates.map((a): Alternate => ({ hreflang: a[0], href: a[1] })),
  };
  if (f.length > 7) page.extensions = f[7] as PageExtensions;
  return page;
}
