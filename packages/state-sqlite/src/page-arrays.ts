/**
 * Characters of page rows gathered as strings before they become bytes. The lines waiting for
 * their array are young strings that survive scavenges while 16 sites are walked at once: kept
 * small, as the NDJSON sink's held rows are (`HeldRows` in `@usp-ts/batch`).
 */
const ARRAY_CHARS = 16 * 1024;

/**
 * One site's page rows until its commit, as JSON arrays of their lines (`[line,line,…]`) in UTF-8
 * bytes, about `ARRAY_CHARS` characters each: outside the JS heap while the site is walked (held
 * as strings, the lines of a run after a few pages were removed took the process from 194 to
 * 241 MiB), and each array is one insert, which SQLite takes apart without a row object in JS.
 */
export class PageArrays {
  #lines: string[] = [];
  #chars = 0;
  #arrays: Buffer[] = [];

  /** One row's JSON text (`JSON.stringify` of a `PageRow`). */
  add(line: string): void {
    this.#lines.push(line);
    this.#chars += line.length;
    if (this.#chars >= ARRAY_CHARS) this.#flush();
  }

  /** The rows added since the last `clear`, in order, as JSON arrays. */
  arrays(): readonly Buffer[] {
    this.#flush();
    return this.#arrays;
  }

  clear(): void {
    this.#lines = [];
    this.#chars = 0;
    this.#arrays = [];
  }

  #flush(): void {
    if (this.#lines.length === 0) return;
    this.#arrays.push(Buffer.from(`[${this.#lines.join(',')}]`, 'utf8'));
    this.#lines.length = 0;
    this.#chars = 0;
  }
}
