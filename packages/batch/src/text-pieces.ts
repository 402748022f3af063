import { ByteChunks } from './byte-chunks.js';

export interface TextPiecesOptions {
  /** Characters gathered as strings before they become bytes. */
  readonly pieceChars: number;
  /** Bytes of the Buffers the pieces are written into (`ByteChunks`). */
  readonly chunkBytes: number;
  /** Put between two parts. Default: nothing. */
  readonly separator?: string;
  /** Whether the separator also ends the last part (lines that each end with '\n'). Default: false. */
  readonly terminated?: boolean;
}

/**
 * Text that becomes bytes in pieces: one conversion per `pieceChars` characters instead of a call
 * a part, and no part's string kept alive for long. The parts are joined once a piece is full, so
 * no string is made a part to put them together; the young strings waiting for their piece stay
 * few, which is what each scavenge of a fresh run copies.
 */
export class TextPieces {
  readonly #parts: string[] = [];
  #chars = 0;
  readonly #bytes: ByteChunks;
  readonly #pieceChars: number;
  readonly #separator: string;
  readonly #terminated: boolean;

  constructor(encoding: BufferEncoding, options: TextPiecesOptions) {
    this.#bytes = new ByteChunks(encoding, options.chunkBytes);
    this.#pieceChars = options.pieceChars;
    this.#separator = options.separator ?? '';
    this.#terminated = options.terminated === true;
  }

  add(text: string): void {
    this.#parts.push(text);
    this.#chars += text.length;
    if (this.#chars >= this.#pieceChars) this.#flush();
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
