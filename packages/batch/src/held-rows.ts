import { closeSync, openSync, readSync, rmSync } from 'node:fs';
import { makeDirectory } from './make-directory.js';
import { writeAll } from './output-files.js';

/**
 * Characters of rows turned into one Buffer while a site is walked. The rows waiting for their
 * piece are young strings that survive scavenges (16 sites at once): at 64 K, ~1 MiB of them was
 * copied by each scavenge of a fresh run; at 16 K its scavenges run 18 % fewer instructions.
 */
const PIECE_CHARS = 16 * 1024;
/** Bytes read at a time when a spilled site is written out. */
const COPY_BYTES = 1024 * 1024;

/**
 * One site's page rows until the site is committed: in memory up to `holdRows` rows, then in a
 * temp file (`spillDir`). Rows become bytes in 64 KiB pieces as they come: a site's held rows
 * then live outside the JS heap, and short-lived strings die young instead of filling the old
 * generation (held as strings, one 50,000-page site took the process from 90 to 180 MB).
 *
 * A temp file that cannot be written (a full disk) is not the walk's failure: the rows are
 * dropped, and `drain` throws the error when the site is committed.
 */
export class HeldRows {
  /** Lines not yet in a piece (joined when one is made: no string a row to put them together). */
  readonly #lines: string[] = [];
  #chars = 0;
  #chunks: Buffer[] = [];
  #rows = 0;
  #spill: { path: string; fd: number } | null = null;
  #failure: unknown = null;
  readonly #spillDir: string;
  readonly #spillPath: () => string;
  readonly #holdRows: number;

  constructor(spillDir: string, spillPath: () => string, holdRows: number) {
    this.#spillDir = spillDir;
    this.#spillPath = spillPath;
    this.#holdRows = holdRows;
  }

  /** One row's line, without its '\n'. */
  add(line: string): void {
    if (this.#failure !== null) return;
    this.#lines.push(line);
    this.#chars += line.length;
    if (this.#chars >= PIECE_CHARS) this.#piece();
    if (++this.#rows >= this.#holdRows) this.#toSpill();
  }

  /** Hands every held byte to `write` in order (a spilled site in 1 MiB pieces), then forgets them. */
  drain(write: (data: Uint8Array) => void): void {
    if (this.#failure !== null) throw this.#failure;
    this.#piece();
    if (this.#spill !== null) {
      const spill = this.#spill;
      closeSync(spill.fd);
      spill.fd = openSync(spill.path, 'r');
      const piece = Buffer.allocUnsafe(COPY_BYTES);
      for (;;) {
        const n = readSync(spill.fd, piece, 0, COPY_BYTES, null);
        if (n === 0) break;
        write(piece.subarray(0, n));
      }
      this.#removeSpill();
    }
    if (this.#chunks.length > 0) write(Buffer.concat(this.#chunks));
    this.#chunks = [];
  }

  drop(): void {
    this.#lines.length = 0;
    this.#chars = 0;
    this.#chunks = [];
    this.#removeSpill();
  }

  #removeSpill(): void {
    if (this.#spill === null) return;
    closeSync(this.#spill.fd);
    rmSync(this.#spill.path, { force: true });
    this.#spill = null;
  }

  #piece(): void {
    if (this.#lines.length === 0) return;
    this.#lines.push('');
    this.#chunks.push(Buffer.from(this.#lines.join('\n')));
    this.#lines.length = 0;
    this.#chars = 0;
  }

  #toSpill(): void {
    this.#piece();
    try {
      if (this.#spill === null) {
        makeDirectory(this.#spillDir);
        const path = this.#spillPath();
        this.#spill = { path, fd: openSync(path, 'w') };
      }
      for (const c of this.#chunks) writeAll(this.#spill.fd, c);
    } catch (err) {
      this.#failure = err;
      this.drop();
      return;
    }
    this.#chunks = [];
    this.#rows = 0;
  }
}
