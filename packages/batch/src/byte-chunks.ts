/**
 * Spent chunks of one size, kept for the next text rather than left to the garbage collector.
 * A chunk that lives as long as a site (held rows) is promoted with its Buffer, and its memory
 * is freed only by the next full collection: until then it counts against the old generation's
 * limit as external memory, and a fresh batch's held rows were most of what started its
 * mark-compacts. Reused, the same few chunks serve every site.
 */
export class ChunkPool {
  readonly chunkBytes: number;
  readonly #free: Buffer[] = [];
  readonly #max: number;

  /** `max`: chunks kept at most (more given back are left to the collector). */
  constructor(chunkBytes: number, max: number) {
    this.chunkBytes = chunkBytes;
    this.#max = max;
  }

  /** Chunks kept now. */
  get size(): number {
    return this.#free.length;
  }

  take(): Buffer {
    return this.#free.pop() ?? Buffer.allocUnsafeSlow(this.chunkBytes);
  }

  /** Takes back chunks nothing reads any more. */
  give(chunks: readonly Buffer[]): void {
    for (const chunk of chunks) {
      if (this.#free.length >= this.#max) return;
      this.#free.push(chunk);
    }
  }
}

/**
 * Text made bytes a piece at a time, written into Buffers of `chunkBytes` shared by many pieces
 * rather than a new Buffer a piece: every Buffer is an ArrayBuffer that each scavenge of the young
 * generation sweeps, and a fresh batch made one for every few kilobytes of its rows. With a
 * `ChunkPool` the chunks come from it, and `recycle` gives them back.
 */
export class ByteChunks {
  readonly #chunks: Buffer[] = [];
  #chunk: Buffer | null = null;
  #used = 0;
  readonly #encoding: BufferEncoding;
  readonly #chunkBytes: number;
  readonly #pool: ChunkPool | null;
  /** The pool's chunks in use since the last `clear` or `recycle`, whole. */
  readonly #taken: Buffer[] = [];

  constructor(encoding: BufferEncoding, chunkBytes: number, pool?: ChunkPool) {
    this.#encoding = encoding;
    this.#pool = pool ?? null;
    this.#chunkBytes = pool?.chunkBytes ?? chunkBytes;
  }

  /** Appends the bytes of `text`. */
  add(text: string): void {
    const n = Buffer.byteLength(text, this.#encoding);
    let chunk = this.#chunk;
    if (chunk === null || this.#used + n > chunk.length) {
      this.#seal();
      chunk = this.#newChunk(n);
      this.#chunk = chunk;
    }
    this.#used += chunk.write(text, this.#used, this.#encoding);
  }

  /** Whether nothing was added since the last `clear`. */
  get empty(): boolean {
    return this.#chunks.length === 0 && this.#used === 0;
  }

  /** The bytes added since the last `clear`, in order (later text goes to a new chunk). */
  pieces(): readonly Buffer[] {
    this.#seal();
    return this.#chunks;
  }

  clear(): void {
    this.#chunks.length = 0;
    this.#chunk = null;
    this.#used = 0;
    this.#taken.length = 0;
  }

  /**
   * `clear`, and the pool's chunks go back to it: only once nothing reads the pieces given out
   * since the last `clear` (they are views of those chunks).
   */
  recycle(): void {
    this.#pool?.give(this.#taken);
    this.clear();
  }

  #newChunk(n: number): Buffer {
    const pool = this.#pool;
    if (pool === null || n > this.#chunkBytes) return Buffer.allocUnsafeSlow(Math.max(this.#chunkBytes, n));
    const chunk = pool.take();
    this.#taken.push(chunk);
    return chunk;
  }

  #seal(): void {
    if (this.#chunk !== null && this.#used > 0) this.#chunks.push(this.#chunk.subarray(0, this.#used));
    this.#chunk = null;
    this.#used = 0;
  }
}
