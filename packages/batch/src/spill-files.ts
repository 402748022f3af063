import { closeSync, openSync, readSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { makeDirectory } from './make-directory.js';

/**
 * The temp files large sites' held rows spill to, reused from site to site rather than one new
 * file a site: a site's rows are written over what an earlier site left (only its own length is
 * read back), into pages the page cache already holds. A new file a site made the kernel find and
 * zero every page of it, then free them all again at the unlink: in a fresh 1,000-site run, ~66
 * MB spilled by ~70 sites, each also a `mkdir`, an `open`, two `close`s, a reopen and an unlink.
 * A file that failed a write is not reused. `close` closes them all; the directory is the
 * sink's to remove.
 */
export class SpillFiles {
  readonly #dir: string;
  readonly #free: number[] = [];
  readonly #paths = new Map<number, string>();
  #made = 0;

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** Files made so far (tests). */
  get made(): number {
    return this.#made;
  }

  /** A file to write from its start: a free one, or a new one in the directory. */
  take(): number {
    const free = this.#free.pop();
    if (free !== undefined) return free;
    makeDirectory(this.#dir);
    const path = join(this.#dir, `${process.pid}-${this.#made++}.ndjson`);
    const fd = openSync(path, 'w+');
    this.#paths.set(fd, path);
    return fd;
  }

  /** A file whose bytes nothing reads any more, for the next site. */
  give(fd: number): void {
    this.#free.push(fd);
  }

  /** A file not to reuse (a write to it failed): closed and removed. */
  discard(fd: number): void {
    const path = this.#paths.get(fd);
    this.#paths.delete(fd);
    try {
      closeSync(fd);
    } finally {
      if (path !== undefined) rmSync(path, { force: true });
    }
  }

  /** Closes every file (taken or free). */
  close(): void {
    for (const fd of this.#paths.keys()) closeSync(fd);
    this.#paths.clear();
    this.#free.length = 0;
  }
}

/** Reads bytes `[0, length)` of `fd` into `into`, a piece at a time, handing each to `use`. */
export function readBack(fd: number, length: number, into: Buffer, use: (piece: Uint8Array) => void): void {
  let at = 0;
  while (at < length) {
    const n = readSync(fd, into, 0, Math.min(into.length, length - at), at);
    if (n <= 0) throw new Error(`a spilled site's temp file ended ${length - at} bytes early`);
    use(into.subarray(0, n));
    at += n;
  }
}
