import { ByteChunks, type ChunkPool } from './byte-chunks.js';

export interface TextPiecesOptions {
  /** Characters gathered as strings before they become bytes. */
  readonly pieceChars: number;
  /** Bytes of the Buffers the pieces are written into (`ByteChunks`). */
  readonly chunkBytes: number;
  /** Put between two parts. Default: nothing. */
  readonly separator?: string;
  /** Whether the separator also ends the last part (lines that each end with '\n'). Default: false. */
  readonly terminated?: boolean;
  /** Where the Buffers come from (then of the pool's size), and go back to at `recycle`. */
  readonly pool?: ChunkPool;
}

/**
 * Text that becomes bytes in pieces: one conversion per `pieceChars` characters instead of a call
 * a part, and no part's string kept alive for long. The parts are joined once a piece is full, so
 * no string is made a part to put them together; the young strings waiting for their piece stay
 * few, which is what each scavenge of a fresh run copies. Parts left when the synchronous work
 * that added them ends (a document chunk's pages) become bytes in a microtask right after it:
 * otherwise they waited, across other sites' work, for the next parts of their own, and were
 * promoted to the old generation on the way.
 */
export class TextPieces {
  readonly #parts: string[] = [];
  #chars = 0;
  readonly #bytes: ByteChunks;
  readonly #pieceChars: number;
  readonly #separator: string;
  readonly #terminated: boolean;
  #flushQueued = false;
  readonly #flushQueuedParts = (): void => {
    this.#flushQueued = false;
    this.#flush();
  };

  constructor(encoding: BufferEncoding, options: TextPiecesOptions) {
    this.#bytes = new ByteChunks(encoding, options.chunkBytes, options.pool);
    this.#pieceChars = options.pieceChars;
    this.#separator = options.separator ?? '';
    this.#terminated = options.terminated === true;
  }

  add(text: string): void {
    this.#parts.push(text);
    this.#chars += text.length;
    if (this.#chars >= this.#pieceChars) this.#flush();
    else if (!this.#flushQueued) {
      this.#flushQueued = true;
      queueMicrotask(this.#flushQueuedParts);
    }
  }

  /** The bytes of everything added since the last `clear`, in order. */
  pieces(): readonly Buffer[] {
    this.#flush();
    return this.#bytes.pieces();
  }

  /** Everything added since the last `clear`, as one Buffer. */
  bytes(): Buffer {
    const pieces = this.pieces();
    return pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces);
  }

  clear(): void {
    this.#parts.length = 0;
    this.#chars = 0;
    this.#bytes.clear();
  }

  /** `clear`, the Buffers given back to the pool: only once nothing reads what `pieces` gave. */
  recycle(): void {
    this.#parts.length = 0;
    this.#chars = 0;
    this.#bytes.recycle();
  }

  #flush(): void {
    if (this.#parts.length === 0) return;
    const sep = this.#separator;
    if (this.#terminated) this.#parts.push('');
    const text = this.#parts.join(sep);
    // Unterminated parts need the separator between this piece's first and the last one before.
    this.#bytes.add(!this.#terminated && sep !== '' && !this.#bytes.empty ? sep + text : text);
    this.#parts.length = 0;
    this.#chars = 0;
  }
}
