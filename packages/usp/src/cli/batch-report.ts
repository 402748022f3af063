import type { BatchProgress, SiteResult } from '@usp-ts/batch';

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

/** The terminal's progress line and the end-of-run summary. */
export class BatchReport {
  readonly #tty: boolean;
  readonly #started = Date.now();
  #last = 0;
  #shown = false;
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
    const secs = Math.max((now - this.#started) / 1000, 0.001);
    const done = p.sitesDone + p.sitesSkipped;
    const eta =
      this.total !== null && p.sitesDone > 0
        ? ` | ETA ${formatEta(((this.total - done) * (now - this.#started)) / p.sitesDone)}`
        : '';
    const text = `sites ${done}${this.total !== null ? `/${this.total}` : ''} (${p.sitesActive} active) | pages ${p.pages} | ${(p.requests / secs).toFixed(1)} req/s | 304s ${p.notModified} | failed ${p.failures}${eta}`;
    const width = (process.stderr.columns ?? 80) - 1;
    process.stderr.write(`\r${text.slice(0, width)}\x1b[K`);
    this.#shown = true;
  }

  clear(): void {
    if (this.#shown) process.stderr.write('\r\x1b[K');
    this.#shown = false;
  }

  summary(statuses: Map<string, number>, command = 'usp batch'): string {
    const p = this.progress;
    const secs = (Date.now() - this.#started) / 1000;
    const byStatus = [...statuses].map(([s, n]) => `${n} ${s}`).join(', ');
    const skipped = p !== null && p.sitesSkipped > 0 ? `, ${p.sitesSkipped} done before (resumed)` : '';
    return `${command}: ${p?.sitesDone ?? 0} sites (${byStatus || 'none'})${skipped}; ${p?.pages ?? 0} pages, ${p?.requests ?? 0} requests (${p?.notModified ?? 0} not modified), ${((p?.bytes ?? 0) / 1048576).toFixed(1)} MiB in ${secs.toFixed(1)} s`;
  }
}
