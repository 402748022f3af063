import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import {
  type BatchProgress,
  batchWalk,
  DEFAULT_MAX_CRAWL_DELAY_MS,
  DEFAULT_PER_HOST,
  DEFAULT_SITE_DEADLINE_MS,
  DEFAULT_SITES,
  type NdjsonSink,
  OutputError,
  openNdjsonSink,
  type SiteResult,
} from '@usp-ts/batch';
import { DEFAULT_MAX_SITEMAPS, type StateStore, StateStoreError } from '@usp-ts/core';
import { createWebClient, type WebClientOptions } from '@usp-ts/fetcher';
import { nodeGunzip } from '../gunzip-node.js';
import { createDefaultRegistry } from '../plugins.js';
import {
  count,
  duration,
  flag,
  integer,
  list,
  type OptionSpec,
  onePositional,
  type Parsed,
  parse,
  str,
  UsageError,
} from './args.js';
import { NETWORK_HELP, NETWORK_OPTIONS, webClientOptionsFrom } from './network.js';
import { loadOptionalPackage } from './optional-package.js';

export const BATCH_USAGE =
  'usage: usp batch [-h] (--out DIR [--state FILE] [--resume] | --queue URL [--no-wait]) [options] <sites-file|->';

export const BATCH_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  out: { type: 'string', short: 'o' },
  gzip: { type: 'boolean' },
  state: { type: 'string' },
  resume: { type: 'boolean' },
  full: { type: 'boolean' },
  'full-every': { type: 'string' },
  sites: { type: 'string' },
  'per-host': { type: 'string' },
  'max-crawl-delay': { type: 'string' },
  'site-deadline': { type: 'string' },
  'no-robots': { type: 'boolean', short: 'r' },
  'no-known': { type: 'boolean', short: 'k' },
  'extra-known-path': { type: 'string', multiple: true },
  wp: { type: 'boolean' },
  'sitemap-txt': { type: 'boolean' },
  'max-depth': { type: 'string' },
  'max-sitemaps': { type: 'string' },
  'max-pages': { type: 'string' },
  verbose: { type: 'boolean', short: 'v', multiple: true },
  'no-progress': { type: 'boolean' },
  queue: { type: 'string' },
  'queue-name': { type: 'string' },
  'no-wait': { type: 'boolean' },
  ...NETWORK_OPTIONS,
} satisfies OptionSpec;

export const BATCH_HELP = `${BATCH_USAGE}

walk the sitemaps of many sites: politely (per host), with a deadline per site, resumably, and
with --state incrementally (a second run fetches only what changed)

positional arguments:
  sites-file                one homepage URL a line ("-": stdin); blank lines and # comments
                            skipped, duplicates walked once, other lines reported as invalid

options:
  -h, --help                show this help message and exit
  -o, --out DIR             output directory (required): pages.ndjson, sitemaps.ndjson,
                            sites.ndjson and journal.ndjson
  --gzip                    write .ndjson.gz files
  --state FILE              SQLite state file for incremental runs (created when missing): pages
                            get "change": new | changed | unchanged, unchanged sitemaps emit nothing
  --resume                  go on with the run in --out after a crash or kill: sites already
                            written are skipped, a site cut off is walked again
  --full                    ignore the state's validators and lastmod skips this time
  --full-every DURATION     a full walk of a site when its last one is older (e.g. 7d; default never)
  --sites N                 sites walked at once (default ${DEFAULT_SITES})
  --per-host N              requests in flight to one host at most (default ${DEFAULT_PER_HOST})
  --max-crawl-delay DURATION
                            longest robots.txt Crawl-delay honoured (default ${DEFAULT_MAX_CRAWL_DELAY_MS / 1000}s)
  --site-deadline DURATION  each site's time budget (default ${DEFAULT_SITE_DEADLINE_MS / 60_000}m); a site cut by it is "partial"
  -r, --no-robots           don't discover sitemaps through robots.txt
  -k, --no-known            don't discover sitemaps through the well-known paths
  --extra-known-path PATH   also probe this path on every site (repeatable)
  --wp                      also probe /wp-sitemap.xml
  --sitemap-txt             also probe /sitemap.txt
  --max-depth N             index nesting followed, robots.txt being 0 (default 11)
  --max-sitemaps N          fetch at most N sitemaps per site (default ${DEFAULT_MAX_SITEMAPS.toLocaleString('en-US')})
  --max-pages N             stop a site after N pages (default: none)
  -v, --verbose             a line per site on stderr
  --no-progress             no progress line (it shows only when stderr is a terminal)

distributed (workers on any number of machines run "usp worker", see its help):
  --queue URL               put one job per site on this Redis (redis://HOST:PORT[/DB]) instead of
                            walking here, then show progress and the summary from the workers'
                            results; without --out, --state and the walk options (the workers' own)
  --queue-name NAME         the queue (default usp-sites)
  --no-wait                 enqueue and exit
  (a site already waiting or being walked is not enqueued twice; jobs that failed after their
  retries are listed at the end, and make the exit status 1)

${NETWORK_HELP}
  (--concurrency is per site; --allow-private-networks is needed for sites on private addresses)

exit status:
  0  the run finished (sites that were unreachable or invalid are rows in sites.ndjson)
  1  the run could not go on: output not writable, --out holding another run, state file locked
     by another run or not a state file (one line on stderr; nothing is deleted)
  2  usage error`;

/** A duration that may also be given in hours or days (`--full-every 7d`). */
export function longDuration(p: Parsed, name: string): number | undefined {
  const v = str(p, name);
  if (v === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)(h|d)$/.exec(v.trim());
  if (m !== null) return Math.round(Number(m[1]) * (m[2] === 'h' ? 3_600_000 : 86_400_000));
  return duration(p, name, BATCH_USAGE);
}

export async function* inputLines(source: string): AsyncGenerator<string> {
  const stream = source === '-' ? process.stdin : createReadStream(source);
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    yield* lines;
  } finally {
    lines.close();
    if (source !== '-') stream.destroy();
  }
}

/** Opens `--state`; the SQLite store is loaded only here (a native module nobody else needs). */
export async function openState(path: string): Promise<StateStore> {
  let mod: typeof import('@usp-ts/state-sqlite');
  try {
    mod = await import('@usp-ts/state-sqlite');
  } catch (cause) {
    throw new StateStoreError(
      'io',
      `--state needs the optional package @usp-ts/state-sqlite (npm install @usp-ts/state-sqlite), which did not load: ${(cause as Error).message}`,
      { cause, path },
    );
  }
  return mod.sqliteStateStore(path);
}

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
 * The text of the terminal's progress line: sites done (of `total` when known), pages,
 * requests per second, 304s, failed sites and, once a site is done, the ETA at the pace so far.
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
  const text = `sites ${done}${at.total !== null ? `/${at.total}` : ''} (${p.sitesActive} active) | pages ${p.pages} | ${(p.requests / secs).toFixed(1)} req/s | 304s ${p.notModified} | failed ${p.failures}${eta}`;
  return text.slice(0, Math.max(at.columns - 1, 0));
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
    const text = progressLine(p, {
      total: this.total,
      elapsedMs: now - this.#started,
      // A pseudo-terminal with no size set says 0 columns.
      columns: (process.stderr.columns ?? 0) > 0 ? process.stderr.columns : 80,
    });
    process.stderr.write(`\r${text}\x1b[K`);
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

/** Counts the sites of a file (for the ETA), when it is a file and not too large to scan. */
export async function countSites(source: string): Promise<number | null> {
  if (source === '-') return null;
  let n = 0;
  for await (const line of inputLines(source)) {
    const t = line.trim();
    if (t !== '' && !t.startsWith('#')) n++;
  }
  return n;
}

/** How every site is walked, from the flags `usp batch` and `usp worker` share. */
export function siteWalkSettings(p: Parsed, usage: string) {
  return {
    sites: integer(p, 'sites', usage, 1) ?? DEFAULT_SITES,
    perHost: integer(p, 'per-host', usage, 1) ?? DEFAULT_PER_HOST,
    clientOptions: webClientOptionsFrom(p, usage),
    walkOptions: {
      useRobots: !flag(p, 'no-robots'),
      useKnownPaths: !flag(p, 'no-known'),
      extraKnownPaths: list(p, 'extra-known-path'),
      includeWordPressSitemap: flag(p, 'wp'),
      includeSitemapTxt: flag(p, 'sitemap-txt'),
      concurrency: integer(p, 'concurrency', usage, 1),
      maxDepth: integer(p, 'max-depth', usage),
      maxSitemaps: integer(p, 'max-sitemaps', usage, 1),
      maxPages: integer(p, 'max-pages', usage, 1),
      gunzip: nodeGunzip,
    },
    siteDeadlineMs: duration(p, 'site-deadline', usage),
    fullEveryMs: longDuration(p, 'full-every'),
    maxCrawlDelayMs: duration(p, 'max-crawl-delay', usage),
  };
}

/** The one web client of a batch process. Its own limits stay out of the way: politeness is the gate's job. */
export function batchWebClient(
  clientOptions: WebClientOptions,
  sites: number,
  perHost: number,
): ReturnType<typeof createWebClient> {
  return createWebClient({
    ...clientOptions,
    maxConcurrentRequests: Math.max(16, sites * perHost),
    maxConnectionsPerHost: Math.max(perHost, 2),
  });
}

export async function runBatch(args: string[], signal: AbortSignal): Promise<number> {
  const p = parse(args, BATCH_OPTIONS, BATCH_USAGE);
  if (flag(p, 'help')) {
    process.stdout.write(`${BATCH_HELP}\n`);
    return 0;
  }
  const source = onePositional(p, 'sites-file', BATCH_USAGE);
  if (str(p, 'queue') !== undefined) {
    // Loaded only here: BullMQ and its Redis client are for the distributed mode.
    const { runQueuedBatch } = await loadOptionalPackage(
      '@usp-ts/queue-bullmq',
      'usp batch --queue',
      () => import('./batch-queue.js'),
    );
    return runQueuedBatch(p, source, signal);
  }
  const out = str(p, 'out');
  if (out === undefined) throw new UsageError('the following arguments are required: --out', BATCH_USAGE);
  const { sites, perHost, clientOptions, walkOptions, siteDeadlineMs, fullEveryMs, maxCrawlDelayMs } =
    siteWalkSettings(p, BATCH_USAGE);
  const statePath = str(p, 'state');
  const verbose = count(p, 'verbose');
  let total: number | null;
  try {
    total = await countSites(source);
  } catch (err) {
    process.stderr.write(`usp: error: cannot read ${source}: ${(err as Error).message}\n`);
    return 1;
  }

  let state: StateStore | null = null;
  let sink: NdjsonSink | null = null;
  const report = new BatchReport(!flag(p, 'no-progress'));
  const statuses = new Map<string, number>();
  const client = batchWebClient(clientOptions, sites, perHost);
  try {
    try {
      if (statePath !== undefined) state = await openState(statePath);
      sink = await openNdjsonSink({
        dir: out,
        ...(flag(p, 'gzip') ? { gzip: true } : {}),
        resume: flag(p, 'resume'),
        state,
      });
    } catch (err) {
      if (err instanceof StateStoreError || err instanceof OutputError) {
        process.stderr.write(`usp: error: ${err.message}\n`);
        return 1;
      }
      throw err;
    }
    const done = sink.done;
    report.total = total;
    const results = batchWalk(inputLines(source), {
      webClient: client,
      registry: createDefaultRegistry(),
      sink,
      state,
      sites,
      perHost,
      ...(maxCrawlDelayMs !== undefined ? { maxCrawlDelayMs } : {}),
      ...(siteDeadlineMs !== undefined ? { siteDeadlineMs } : {}),
      ...(fullEveryMs !== undefined ? { fullEveryMs } : {}),
      ...(flag(p, 'full') ? { full: true } : {}),
      walkOptions,
      isDone: (site) => done.has(site),
      signal,
      onProgress: (progress) => report.update(progress),
    });
    try {
      for await (const r of results as AsyncIterable<SiteResult>) {
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (verbose > 0) {
          report.clear();
          process.stderr.write(siteLine(r));
        }
      }
    } catch (err) {
      if (err instanceof StateStoreError || err instanceof OutputError) {
        report.clear();
        process.stderr.write(`usp: error: ${err.message}\n`);
        return 1;
      }
      throw err;
    }
    report.clear();
    process.stderr.write(`${report.summary(statuses)}\n`);
    return 0;
  } finally {
    report.clear();
    await sink?.close();
    await state?.close();
    await client.close();
  }
}
