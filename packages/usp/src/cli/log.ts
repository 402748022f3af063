import { createWriteStream, openSync } from 'node:fs';
import type { Writable } from 'node:stream';
import type { Warning } from '@usp-ts/core';
import { LogFileError } from './cli-errors.js';

function openLogFile(path: string): number {
  try {
    return openSync(path, 'a');
  } catch (cause) {
    throw new LogFileError(path, { cause });
  }
}

/** Warnings shown at the default verbosity before the rest are only counted. */
const WARNINGS_SHOWN_BY_DEFAULT = 100;
/**
 * Warnings that mean data was lost or a site given up: always shown, whatever came first. `gzip`
 * is a damaged stream whose rest could not be read.
 */
const ALWAYS_SHOWN = new Set(['too-large', 'truncated', 'limit', 'aborted', 'unreachable', 'gzip']);

/**
 * Warnings that say a request failed: held back at the default verbosity until the site shows
 * it answers, so that a site never reached gets the one line naming why, not one per request.
 */
const HELD_UNTIL_ANSWERED = new Set(['fetch', 'unreachable']);

/**
 * Where diagnostics go: stderr or a log file, filtered by verbosity (0: warnings, as usp's
 * default WARNING level; 1 `-v`: info; 2 `-vv`: debug). Never stdout.
 */
export class Log {
  readonly verbosity: number;
  readonly #sink: Writable;
  readonly #toFile: boolean;
  #progress: Progress | null = null;
  #warnings = 0;
  /** Warnings left out at the default verbosity, by code. */
  readonly #hidden = new Map<string, number>();
  /** Failed-request warnings waiting for the site to answer (`holdFailures`); `null`: none held. */
  #held: Warning[] | null = null;

  constructor(verbosity: number, logFile?: string) {
    this.verbosity = verbosity;
    this.#toFile = logFile !== undefined;
    // Appends, as usp's logging.basicConfig(filename=...) does. Opened now, so a bad path is one
    // clear error before any work rather than a stream error in the middle of it.
    this.#sink = logFile === undefined ? process.stderr : createWriteStream('', { fd: openLogFile(logFile) });
  }

  attach(progress: Progress): void {
    this.#progress = progress;
  }

  #write(line: string): void {
    if (!this.#toFile) this.#progress?.clear();
    this.#sink.write(`${line}\n`);
  }

  /**
   * From now on, at the default verbosity, warnings of failed requests wait until the site
   * answers (`release`, or any other warning) and are dropped if it never does (`dropHeld`).
   */
  holdFailures(): void {
    if (this.verbosity === 0) this.#held = [];
  }

  /** The site answered: the held warnings are written, in order, and no more are held. */
  release(): void {
    const held = this.#held;
    if (held === null) return;
    this.#held = null;
    for (const w of held) this.warning(w);
  }

  /** The site never answered: the held warnings go unwritten (one line says why instead). */
  dropHeld(): void {
    this.#held = null;
  }

  warning(w: Warning): void {
    if (this.#held !== null) {
      if (HELD_UNTIL_ANSWERED.has(w.code)) {
        this.#held.push(w);
        return;
      }
      this.release();
    }
    this.#warnings++;
    if (this.verbosity === 0 && this.#warnings > WARNINGS_SHOWN_BY_DEFAULT && !ALWAYS_SHOWN.has(w.code)) {
      this.#hidden.set(w.code, (this.#hidden.get(w.code) ?? 0) + 1);
      return;
    }
    this.#write(`usp: warning: ${w.message} [${w.code}] (${w.url})`);
  }

  /** A line shown at every verbosity that is neither a warning of the walk nor an error. */
  note(message: string): void {
    this.#write(`usp: note: ${message}`);
  }

  info(message: string): void {
    if (this.verbosity >= 1) this.#write(`usp: info: ${message}`);
  }

  debug(message: string): void {
    if (this.verbosity >= 2) this.#write(`usp: debug: ${message}`);
  }

  /** Says how many warnings the default verbosity left out. */
  summary(): void {
    let hidden = 0;
    for (const n of this.#hidden.values()) hidden += n;
    if (hidden > 0) {
      const byCode = [...this.#hidden].map(([code, n]) => `${n} ${code}`).join(', ');
      this.#write(`usp: ${hidden} more warnings not shown (${byCode}; use -v to see all)`);
    }
  }

  async close(): Promise<void> {
    if (!this.#toFile) return;
    const sink = this.#sink;
    await new Promise<void>((resolve) => sink.end(resolve));
  }
}

export interface ProgressCounts {
  sitemapsDone: number;
  sitemapsQueued: number;
  pages: number;
  bytes: number;
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * A one-line status on a terminal's stderr, redrawn at most ten times a second and cleared
 * before any log line and at the end. Silent when stderr is not a terminal.
 */
export class Progress {
  readonly #stream: Writable & { isTTY?: boolean; columns?: number };
  readonly #enabled: boolean;
  readonly #started = Date.now();
  #lastDraw = 0;
  #shown = false;
  #counts: ProgressCounts = { sitemapsDone: 0, sitemapsQueued: 0, pages: 0, bytes: 0 };

  constructor(enabled: boolean, stream: Writable & { isTTY?: boolean; columns?: number } = process.stderr) {
    this.#stream = stream;
    this.#enabled = enabled && stream.isTTY === true;
  }

  update(counts: Partial<ProgressCounts>): void {
    if (!this.#enabled) return;
    this.#counts = { ...this.#counts, ...counts };
    const now = Date.now();
    if (now - this.#lastDraw < 100) return;
    this.#lastDraw = now;
    this.#draw(now);
  }

  #draw(now: number): void {
    const c = this.#counts;
    const secs = Math.max((now - this.#started) / 1000, 0.001);
    const text = `sitemaps ${c.sitemapsDone} done, ${c.sitemapsQueued} queued | pages ${c.pages} | ${formatBytes(c.bytes)} | ${Math.round(c.pages / secs)} pages/s`;
    const cols = this.#stream.columns;
    const width = (cols !== undefined && cols > 20 ? cols : 80) - 1;
    this.#stream.write(`\r${text.slice(0, width)}\x1b[K`);
    this.#shown = true;
  }

  clear(): void {
    if (!this.#shown) return;
    this.#stream.write('\r\x1b[K');
    this.#shown = false;
  }
}
