import type pg from 'pg';

/** One `COPY … FROM STDIN` of a text and the data it reads (each Buffer one CopyData message). */
export interface CopyIn {
  readonly sql: string;
  readonly data: readonly Buffer[];
}

/** A part of a `OneMessage`: statements, or a COPY and its data. */
export type MessagePart = string | CopyIn;

// The protocol's message types (frontend): a simple query, a piece of COPY data, the end of it.
const QUERY = 0x51;
const COPY_DATA = 0x64;
const COPY_DONE = 0x63;

/** A message's type and length (which counts itself, not the type). */
function header(type: number, bodyBytes: number): Buffer {
  const b = Buffer.allocUnsafe(5);
  b[0] = type;
  b.writeUInt32BE(bodyBytes + 4, 1);
  return b;
}

/**
 * A whole transaction with COPYs in it as one write: a simple query whose statements are `parts`
 * in order (a string: statements; a `CopyIn`: its `COPY … FROM STDIN`), followed at once by the
 * COPYs' data, in the same order, without waiting for the server between them. The server runs the statements in order and reads each
 * COPY's data from what follows the query when it comes to it; so a site's commit costs the client
 * one round trip instead of one a part (its head, each COPY, its tail).
 *
 * When a statement fails, the server discards the rest of the query, answers with the error and
 * then ignores the COPY data still to come (the protocol has it accept and drop COPY messages
 * outside a COPY: a client may have sent them before it knew). A transaction begun in its parts
 * is then left aborted, for the caller to roll back.
 */
export class OneMessage implements pg.Submittable {
  /** Settles when the server has answered all of it: rejected with its error, if any. */
  readonly done: Promise<void>;
  /** The query's statements. */
  readonly text: string;
  readonly #copies: readonly CopyIn[];
  #error: Error | undefined;
  #resolve!: () => void;
  #reject!: (error: Error) => void;
  #settled = false;

  constructor(parts: readonly MessagePart[]) {
    this.text = parts.map((p) => (typeof p === 'string' ? p : `${p.sql};`)).join('\n');
    this.#copies = parts.filter((p): p is CopyIn => typeof p !== 'string');
    this.done = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  submit(connection: pg.Connection): void {
    const text = Buffer.from(`${this.text}\0`);
    const stream = connection.stream;
    stream.cork();
    stream.write(header(QUERY, text.length));
    stream.write(text);
    for (const copy of this.#copies) {
      for (const chunk of copy.data) {
        if (chunk.length === 0) continue;
        stream.write(header(COPY_DATA, chunk.length));
        stream.write(chunk);
      }
      stream.write(header(COPY_DONE, 0));
    }
    process.nextTick(() => stream.uncork());
  }

  // The answers pg hands the query in flight. Rows and command tags are not needed; the COPY data
  // went with the query.
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handleCopyInResponse(): void {}

  /** The server's error (its ReadyForQuery then goes to no query), or the connection's end. */
  handleError(error: Error): void {
    this.#error ??= error;
    this.#settle();
  }

  handleReadyForQuery(): void {
    this.#settle();
  }

  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    if (this.#error === undefined) this.#resolve();
    else this.#reject(this.#error);
  }
}
