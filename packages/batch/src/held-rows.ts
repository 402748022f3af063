import { ChunkPool } from './byte-chunks.js';
import { writeAll } from './output-files.js';
import { readBack, type SpillFiles } from './spill-files.js';
import { TextPieces } from './text-pieces.js';

/**
 * Rows become bytes 16 K characters at a time while a site is walked. The rows waiting for their
 * piece are young strings that survive scavenges (16 sites at once): at 64 K, ~1 MiB of them was
 * copied by each scavenge of a fresh run; at 16 K its scavenges run 18 % fewer instructions.
 */
const CHUNK_BYTES = 64 * 1024;
/**
 * The 64 KiB chunks of every site's held rows, reused from site to site: 64 are 4 MiB, about what
 * 16 sites at once hold before they spill. A chunk that lives as long as its site is promoted,
 * and freed only by the next full collection: new ones each site were ~190 MB a fresh 1,000-site
 * run of external memory that started most of its mark-compacts (byte-chunks.ts).
 */
const HELD_CHUNKS = new ChunkPool(CHUNK_BYTES, 64);
const PIECES = {
  pieceChars: 16 * 1024,
  chunkBytes: CHUNK_BYTES,
  separator: '\n',
  terminated: true,
  pool: HELD_CHUNKS,
} as const;
/** Bytes read at a time when a spilled site is written out. */
const COPY_BYTES = 1024 * 1024;
/** The Buffer a spilled site is read back through: one for the process (`drain` is synchronous). */
let copyBuffer: Buffer | null = null;

/**
 * One site's page rows until the site is committed: in memory up to `holdRows` rows, then in a
 * temp file (one of `spills`, given back when the rows are drained or dropped). Rows become
 * bytes in 64 KiB pieces as they come: a site's held rows then live outside the JS heap, and short-lived strings die young instead of filling the old
 * generation (held as strings, one 50,000-page site took the process from 90 to 180 MB).
 *
 * A temp file that cannot be written (a full disk) is not the walk's failure: the rows are
 * dropped, and `drain` throws the error when the site is committed.
 */
export class HeldRows {
  /** The rows' lines, each ending with '\n'. */
  readonly #text = new TextPieces('utf8', PIECES);
  #rows = 0;
  /** The temp file taken, and how many of its bytes are this site's. */
  #spill: { fd: number; bytes: number } | null = null;
  #failure: unknown = null;
  readonly #spills: SpillFiles;
  readonly #holdRows: number;

  constructor(spills: SpillFiles, holdRows: number) {
    this.#spills = spills;
    this.#holdRows = holdRows;
  }

  /** One row's line, without its '\n'. */
  add(line: string): void {
    if (this.#failure !== null) return;
    this.#text.add(line);
    if (++this.#rows >= this.#holdRows) this.#toSpill();
  }

  /**
   * Hands every held byte to `write` in order (a spilled site in 1 MiB pieces), then forgets them:
   * `write` must be done with each piece when it returns (the Buffers are used again).
   */
  drain(write: (data: Uint8Array) => void): void {
    if (this.#failure !== null) throw this.#failure;
    if (this.#spill !== null) {
      copyBuffer ??= Buffer.allocUnsafeSlow(COPY_BYTES);
      readBack(this.#spill.fd, this.#spill.bytes, copyBuffer, write);
      this.#giveSpill();
    }
    const held = this.#text.bytes();
    if (held.length > 0) write(held);
    this.#text.recycle();
  }

  drop(): void {
    this.#text.recycle();
    this.#giveSpill();
  }

  #giveSpill(): void {
    if (this.#spill === null) return;
    this.#spills.give(this.#spill.fd);
    this.#spill = null;
  }

  #toSpill(): void {
    try {
      this.#spill ??= { fd: this.#spills.take(), bytes: 0 };
      const spill = this.#spill;
      for (const c of this.#text.pieces()) {
        writeAll(spill.fd, c, spill.bytes);
        spill.bytes += c.length;
      }
    } catch (err) {
      this.#failure = err;
      this.#text.recycle();
      if (this.#spill !== null) {
        const fd = this.#spill.fd;
        this.#spill = null;
        try {
          this.#spills.discard(fd);
        } catch {
          // Closed at the sink's close, removed with its directory.
        }
      }
      return;
    }
    this.#text.recycle();
    this.#rows = 0;
  }
}
