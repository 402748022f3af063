/**
 * Text made bytes a piece at a time, written into Buffers of `chunkBytes` shared by many pieces
 * rather than a new Buffer a piece: every Buffer is an ArrayBuffer that each scavenge of the young
 * generation sweeps, and a fresh batch made one for every few kilobytes of its rows.
 */
export class ByteChunks {
  readonly #chunks: Buffer[] = [];
  #chunk: Buffer | null = null;
  #used = 0;
  readonly #encoding: BufferEncoding;
  readonly #chunkBytes: number;

  constructor(encoding: BufferEncoding, chunkBytes: number) {
    this.#encoding = encoding;
    this.#chunkBytes = chunkBytes;
  }

  /** Appends the bytes of `text`. */
  add(text: string): void {
    const n = Buffer.byteLength(text, this.#encoding);
    let chunk = this.#chunk;
    if (chunk === null || this.#used + n > chunk.length) {
      this.#seal();
      chunk = Buffer.allocUnsafeSlow(Math.max(this.#chunkBytes, n));
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
  }

  #seal(): void {
    if (this.#chunk !== null && this.#used > 0) this.#chunks.push(this.#chunk.subarray(0, this.#used));
    this.#chunk = null;
    this.#used = 0;
  }
}
