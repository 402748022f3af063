import { fdatasync, writeSync } from 'node:fs';

/**
 * Writes all of `data`: `write` may take fewer bytes than it was given (a file system that is
 * filling up takes what fits, and the next write fails with ENOSPC), and bytes that were never
 * written must not be counted as output.
 */
export function writeAll(fd: number, data: Uint8Array | string, position?: number): void {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  let at = 0;
  while (at < bytes.length) {
    const n = writeSync(fd, bytes, at, bytes.length - at, position === undefined ? null : position + at);
    if (n <= 0) {
      const err = new Error(`no space left on device: a write of ${bytes.length - at} bytes took none`);
      throw Object.assign(err, { code: 'ENOSPC' });
    }
    at += n;
  }
}

/**
 * `fdatasync` of a set of files, shared: a caller asks for everything written up to its own
 * write (`wrote()` numbers the writes), and callers that arrive while a sync runs share the next
 * one. A batch commits sites one after another, several a millisecond on a no-change run: each
 * waiting for a sync of its own would be one disk flush a site. A sync covers the files written
 * since the last one began (`touch`), not all of them: on a run where nothing changed no page is
 * written, and every sync task is a wake-up of a libuv thread on a core the run needs.
 */
export class GroupSync {
  #wrote = 0;
  #synced = 0;
  #running: Promise<void> | null = null;
  /** The files written since the last sync began. */
  readonly #dirty = new Set<number>();

  readonly #sync: (fd: number) => Promise<void>;

  /** `fds`: every file starts out unsynced (opening may have cut it). `sync`: `fdatasync` (tests). */
  constructor(fds: readonly number[], sync: (fd: number) => Promise<void> = syncFile) {
    for (const fd of fds) this.#dirty.add(fd);
    this.#sync = sync;
  }

  /** Notes a write to `fd`, to be counted by the next `wrote()`. */
  touch(fd: number): void {
    this.#dirty.add(fd);
  }

  /** Counts a write (its files `touch`ed); the number to wait for with `upTo`. */
  wrote(): number {
    return ++this.#wrote;
  }

  /** Resolves once a sync that started after write `mark` has ended; rejects with its error. */
  async upTo(mark: number): Promise<void> {
    while (this.#synced < mark) {
      if (this.#running === null) {
        const covers = this.#wrote;
        const fds = [...this.#dirty];
        this.#dirty.clear();
        this.#running = syncInTurn(fds, this.#sync)
          .then(
            () => {
              if (covers > this.#synced) this.#synced = covers;
            },
            (err: unknown) => {
              // Not known to be on disk: the next sync tries them again.
              for (const fd of fds) this.#dirty.add(fd);
              throw err;
            },
          )
          .finally(() => {
            this.#running = null;
          });
      }
      await this.#running;
    }
  }

  /** Resolves once everything written so far is on disk. */
  all(): Promise<void> {
    return this.upTo(this.#wrote);
  }
}

/**
 * The files one after another, not all at once: each sync is a task that wakes one of libuv's
 * threads, and three or four woken together took the cores from the main thread (a no-change run
 * of 1,000 sites on two cores: ~600-1,000 preemptions of the main thread, ~120-350 in turn, and
 * ~10 % of its wall). A group then takes the sum of its files' sync times, not the longest; the
 * sites that commit meanwhile join the next group (and, with few rows, give their place to the
 * next site while they wait: `batchWalk`).
 */
async function syncInTurn(fds: readonly number[], sync: (fd: number) => Promise<void>): Promise<void> {
  for (const fd of fds) await sync(fd);
}

// On libuv's pool, not this thread: a sync blocks for up to a disk's latency, and on this
// thread that held every site's walk for as long.
function syncFile(fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fdatasync(fd, (err) => (err === null ? resolve() : reject(err)));
  });
}
