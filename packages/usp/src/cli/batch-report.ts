import { type BatchProgress, emptyProgress, type SiteResult, sitesText } from '@usp-ts/batch';

function formatEta(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 3600
    ? `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`
    : s >= 60
      ? `${Math.floor(s / 60)}m${s % 60}s`
      : `${s}s`;
}

/** The `-v` line of one finished site, the same for usp batch, its queue producer and usp worker. */
export function siteLine(r: SiteResult): string {
  return `usp: ${r.site}: ${r.status}${r.reason !== null ? ` (${r.reason})` : ''}, ${r.pages} pages, ${r.sitemaps} sitemaps, ${r.requests} requests, ${r.ms} ms\n`;
}

/**
 * The text of the terminal's progress line: sites done (of `total` when known, which a finished
 * run reaches), pages, requests per second, 304s, the sites that did not end `ok` by status and,
 * once a site is done, the ETA at the pace so far.
 * Cut to `columns - 1` characters so that it never wraps (a wrapped line cannot be redrawn with `\r`).
 */
export function progressLine(
  p: BatchProgress,
  at: { readonly total: number | null; readonly elapsedMs: number; readonly columns: number },
): string {
  const secs = Math.max(at.elapsedMs / 1000, 0.001);
  const done = p.sitesDone + p.sitesSkipped;
  const eta =
    at.total !== null && p.sitesDone > 0
      ? ` | ETA ${formatEta(((at.total - done) * at.elapsedMs) / p.sitesDone)}`
      : '';
  // The statuses other than ok, in the summary's words (the summary lists them all).
  const notOk = sitesText(p, (status) => status !== 'ok');
  const text = `sites ${done}${at.total !== null ? `/${at.total}` : ''} (${p.sitesActive} active) | pages ${p.pages} | ${(p.requests / secs).toFixed(1)} req/s | 304s ${p.notModified}${notOk !== '' ? ` | ${notOk}` : ''}${eta}`;
  return text.slice(0, Math.max(at.columns - 1, 0));
}

/** The terminal's progress line and the end-of-run summary. */
export class BatchReport {
  readonly #tty: boolean;
  readonly #started = Date.now();
  #last = 0;
  #shown = false;
  /** `-v` lines not written yet, and the timer that writes them. */
  #pending = '';
  #flush: NodeJS.Timeout | null = null;
  total: number | null = null;
  progress: BatchProgress | null = null;

  constructor(enabled: boolean) {
    this.#tty = enabled && process.stderr.isTTY === true;
  }

  update(p: BatchProgress): void {
    this.progress = p;
    if (!this.#tty) return;
    const now = Date.now();
    if (now - this.#last < 200) return;
    this.#last = now;
    const text = progressLine(p, {
      total: this.total,
      elapsedMs: now - this.#started,
      // A pseudo-terminal with no size set says 0 columns.
      columns: (process.stderr.columns ?? 0) > 0 ? process.stderr.columns : 80,
    });
    process.stderr.write(`\r${text}\x1b[K`);
    this.#shown = true;
  }

  /**
   * Writes a `-v` line, at the latest 100 ms later. One write per line was 8 % of a no-change
   * run's main thread (1,000 sites, stderr a pipe): each write to a pipe wakes its reader.
   */
  log(line: string): void {
    this.#pending += line;
    if (this.#pending.length >= 16_384) this.clear();
    else this.#flush ??= setTimeout(() => this.clear(), 100).unref();
  }

  /** Writes the pending `-v` lines and takes the progress line away: call before writing to stderr. */
  clear(): void {
    if (this.#shown) process.stderr.write('\r\x1b[K');
    this.#shown = false;
    if (this.#flush !== null) clearTimeout(this.#flush);
    this.#flush = null;
    if (this.#pending !== '') process.stderr.write(this.#pending);
    this.#pending = '';
  }

  /** The end-of-run line: the sites by status, adding up (`sitesText`), and the totals. */
  summary(command = 'usp batch'): string {
    const p = this.progress ?? emptyProgress();
    const secs = (Date.now() - this.#started) / 1000;
    return `${command}: ${sitesText(p)}; ${p.pages} pages, ${p.requests} requests (${p.notModified} not modified), ${(p.bytes / 1048576).toFixed(1)} MiB in ${secs.toFixed(1)} s`;
  }
}
