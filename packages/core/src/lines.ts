/**
 * Splits streamed text into lines as Python's `str.splitlines()` does (usp's rule): on
 * `\n`, `\r`, `\r\n`, `\v`, `\f`, `\x1c`-`\x1e`, `\x85`, `\u2028`, `\u2029`. A `\r` at the end of one
 * piece and `\n` at the start of the next make one break.
 */
export interface LineSplitter {
  write(text: string): void;
  /** Flushes the last line (if the text did not end with a break). */
  end(): void;
}

export function createLineSplitter(_onLine: (line: string) => void): LineSplitter {
  throw new Error('not implemented yet');
}
