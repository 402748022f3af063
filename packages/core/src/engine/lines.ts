import { InvalidOptionError } from '../contract/errors.js';

/**
 * Splits streamed text into lines as Python's `str.splitlines()` does (usp's rule): on
 * `\n`, `\r`, `\r\n`, `\v`, `\f`, `\x1c`-`\x1e`, `\x85`, `\u2028`, `\u2029`. A `\r` at the end of one
 * piece and `\n` at the start of the next make one break.
 */
export interface LineSplitter {
  write(text: string): void;
  /**
   * Flushes the last line (if the text did not end with a break). With `dropUnterminated` (the
   * body broke off) that line is discarded instead: it may be cut mid-URL.
   */
  end(dropUnterminated?: boolean): void;
}

export interface LineSplitterOptions {
  /**
   * Longest line kept, in UTF-16 code units (default {@link DEFAULT_MAX_LINE_LENGTH}). The rest of a
   * longer line is skipped, never buffered, and the line is delivered with `truncated` set.
   */
  maxLineLength?: number;
}

/** `truncated`: the line was longer than `maxLineLength` and only its start is given. */
export type LineListener = (line: string, truncated: boolean) => void;

/** 64 KiB: far beyond any URL or robots.txt rule, small enough that junk cannot balloon memory. */
export const DEFAULT_MAX_LINE_LENGTH = 65_536;

export function createLineSplitter(onLine: LineListener, options: LineSplitterOptions = {}): LineSplitter {
  const max = options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH;
  if (!Number.isInteger(max) || max < 1) {
    throw new InvalidOptionError('maxLineLength', `must be a positive integer, got ${String(max)}`);
  }
  // One regex per splitter: its lastIndex is state, and a listener may feed another splitter.
  const breaks = /[\n\v\f\r\x1c-\x1e\x85\u2028\u2029]/g;
  // Almost all text breaks on \n or \r only: then indexOf (memchr speed) finds the breaks, and the
  // regex scan, about 15 times slower, is needed only for chunks holding one of the rare breaks.
  const rareBreak = /[\v\f\x1c-\x1e\x85\u2028\u2029]/;
  let partial = '';
  let truncated = false;
  let pendingCR = false;
  let ended = false;

  const append = (text: string, from: number, to: number): void => {
    if (to <= from) return;
    const room = max - partial.length;
    if (to - from > room) {
      truncated = true;
      if (room > 0) partial += text.slice(from, from + room);
    } else {
      partial += text.slice(from, to);
    }
  };

  return {
    write(text) {
      if (ended) throw new Error('LineSplitter: write() after end()');
      const n = text.length;
      if (n === 0) return;
      let start = 0;
      if (pendingCR) {
        pendingCR = false;
        if (text.charCodeAt(0) === 10) start = 1;
      }
      const rare = rareBreak.test(text);
      let nextLF = -2;
      let nextCR = -2;
      const nextBreak = (from: number): number => {
        if (rare) {
          breaks.lastIndex = from;
          const m = breaks.exec(text);
          return m === null ? -1 : m.index;
        }
        if (nextLF !== -1 && nextLF < from) nextLF = text.indexOf('\n', from);
        if (nextCR !== -1 && nextCR < from) nextCR = text.indexOf('\r', from);
        if (nextLF === -1) return nextCR;
        if (nextCR === -1) return nextLF;
        return Math.min(nextLF, nextCR);
      };
      for (let at = nextBreak(start); at !== -1; at = nextBreak(start)) {
        let line: string;
        if (partial === '' && !truncated && at - start <= max) {
          line = text.slice(start, at);
        } else {
          append(text, start, at);
          line = partial;
        }
        const wasTruncated = truncated;
        partial = '';
        truncated = false;
        let next = at + 1;
        if (text.charCodeAt(at) === 13) {
          if (next < n) {
            if (text.charCodeAt(next) === 10) next++;
          } else {
            pendingCR = true;
          }
        }
        start = next;
        onLine(line, wasTruncated);
      }
      append(text, start, n);
    },
    end(dropUnterminated = false) {
      if (ended) return;
      ended = true;
      if (!dropUnterminated && (partial !== '' || truncated)) {
        const line = partial;
        const wasTruncated = truncated;
        partial = '';
        truncated = false;
        onLine(line, wasTruncated);
      }
    },
  };
}

/** Python's `str.isspace()` for one UTF-16 code unit (what `str.strip()` and regex `\s` use; JS differs). */
export function isPythonSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
  if (c < 0x85) return false;
  return (
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

/** Python's `str.strip()`: JS `trim()` also removes U+FEFF and keeps `\x1c`-`\x1f`, Python does the opposite. */
export function pythonStrip(s: string): string {
  let i = 0;
  let j = s.length;
  while (i < j && isPythonSpace(s.charCodeAt(i))) i++;
  while (j > i && isPythonSpace(s.charCodeAt(j - 1))) j--;
  return i === 0 && j === s.length ? s : s.slice(i, j);
}
