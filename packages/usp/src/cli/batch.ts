import {
  batchWalk,
  DEFAULT_MAX_CRAWL_DELAY_MS,
  DEFAULT_PER_HOST,
  DEFAULT_PROBE_TIMEOUT_MS,
  DEFAULT_SITE_DEADLINE_MS,
  DEFAULT_SITES,
  type SiteResult,
} from '@usp-ts/batch';
import { DEFAULT_MAX_SITEMAPS } from '@usp-ts/core';
import { collectOnExternalGrowth } from '../node/external-memory-gc.js';
import { flag, type OptionSpec, onePositional, parse, str, UsageError } from './args.js';
import { scavengeOnOneThread } from './batch-gc.js';
import { detachArrayBufferOnce, tuneJitForBatch } from './batch-jit.js';
import { groupDigits } from './digits.js';
import { countSitesOrSay, inputLines } from './input-lines.js';
import { NETWORK_HELP } from './network.js';
import { loadOptionalPackage } from './optional-package.js';
import { SITE_RUN_PLUGIN_HELP } from './plugin-flags.js';
import { capSemiSpaces } from './semi-space-cap.js';
import { isFullDisk, openSiteRun, siteRunFlags, stopped } from './site-run.js';
import { listedOrigins, SITE_WALK_OPTIONS } from './site-walk.js';

/**
 * The batch's semi-spaces, MiB (its young generation is two of them). A batch allocates a lot
 * that dies young (rows, parse events, HTTP chunks) and keeps little: V8 would grow a main
 * thread's semi-spaces to 16 MiB each, and they stay committed (docs/memory.md). At 8 rather
 * than 4 a fresh 1,000-site run makes half the scavenges (~200), and what survives them does not
 * double (129 MB copied against 165, 80 MB promoted against 93): ~6 % less CPU for ~8 MiB more
 * peak RSS (session 24).
 */
export const BATCH_SEMI_SPACE_MB = 8;

/**
 * Growth of external memory (spent Buffers: HTTP chunks, gunzip output, held rows) that starts a
 * full collection, MiB, once the process's RSS is above `BATCH_COLLECT_ABOVE_RSS_MB`
 * (`collectOnExternalGrowth`). A run after 5 % of the pages were removed reads nearly every
 * sitemap again and peaked at 185-249 MiB (bench:batch-stores, 1,000 sites); at every 8 MiB it
 * kept to 131-174 MiB but cost the fresh run 20-50 % more CPU (three pairs); above 160 MiB only,
 * the fresh run's CPU did not move (1.04×, 0.95-1.13, three pairs) and the removed run stayed under
 * 200 MiB (docs/memory.md).
 */
export const BATCH_EXTERNAL_STEP_MB = 8;
export const BATCH_COLLECT_ABOVE_RSS_MB = 160;

export const BATCH_USAGE =
  'usage: usp batch [-h] (--out DIR [--state FILE] [--resume] | --queue URL [--no-wait]) [options] <sites-file|->';

export const BATCH_OPTIONS = {
  ...SITE_WALK_OPTIONS,
  resume: { type: 'boolean' },
  full: { type: 'boolean' },
  queue: { type: 'string' },
  'queue-name': { type: 'string' },
  'no-wait': { type: 'boolean' },
  'new-run': { type: 'boolean' },
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
                            sites.ndjson and journal.ndjson; locked while the run writes it (a
                            second run on it exits 1 naming the first: pid, host, since when; a
                            lock left by a killed run is taken over); or an SQLite file
                            (FILE.sqlite, FILE.db, sqlite:FILE) holding the run's rows and the
                            state together: no --state, no journal (usp export reads it); or a
                            PostgreSQL database (postgres://USER@HOST[:PORT]/DB, or postgres: for
                            the PG* variables; needs @usp-ts/store-postgres), rows and state
                            together, a run of its own each time (no --resume)
  --gzip                    write .ndjson.gz files
  --state FILE|sqlite:FILE|redis://HOST[:PORT][/DB]
                            state for incremental runs: a SQLite file (created when missing) or a
                            Redis; pages get "change": new | changed | unchanged | removed,
                            unchanged sitemaps emit nothing
  --resume                  go on with the run in --out (a file: its last unfinished run) after a
                            crash or kill: sites already written are skipped, a site cut off is
                            walked again
  --full                    ignore the state's validators and lastmod skips this time
  --full-every DURATION     a full walk of a site when its last one is older (e.g. 7d; default never)
  --sites N                 sites walked at once (default ${DEFAULT_SITES})
  --per-host N              requests in flight to one host name at most (default ${DEFAULT_PER_HOST});
                            counted by name, not address: every port of a host shares it, and
                            localhost and 127.0.0.1 are two hosts
  --max-crawl-delay DURATION
                            longest robots.txt Crawl-delay honoured (default ${DEFAULT_MAX_CRAWL_DELAY_MS / 1000}s)
  --site-deadline DURATION  each site's time budget (default ${DEFAULT_SITE_DEADLINE_MS / 60_000}m); a site cut by it is "partial"
  --probe-timeout DURATION  with --state, a site that gave no answer last run gets one request
                            (robots.txt, no retry) waiting this long, and is walked only if it
                            answers (default ${DEFAULT_PROBE_TIMEOUT_MS / 1000}s; not on full walks)
  -r, --no-robots           don't discover sitemaps through robots.txt
  -k, --no-known            don't discover sitemaps through the well-known paths
  --extra-known-path PATH   also probe this path on every site (repeatable)
  --wp                      also probe /wp-sitemap.xml
  --sitemap-txt             also probe /sitemap.txt
  --max-depth N             index nesting followed, robots.txt being 0 (default 11)
  --max-sitemaps N          fetch at most N sitemaps per site (default ${groupDigits(DEFAULT_MAX_SITEMAPS)})
  --max-pages N             stop a site after N pages (default: none)
${SITE_RUN_PLUGIN_HELP}
  -v, --verbose             a line per site on stderr
  --no-progress             no progress line (it shows only when stderr is a terminal)

distributed (workers on any number of machines run "usp worker", see its help):
  --queue URL               put one job per site on this Redis (redis://HOST:PORT[/DB]) instead of
                            walking here, then show progress and the summary from the workers'
                            results; without --out, --state and the walk options (the workers' own)
  --queue-name NAME         the queue (default usp-sites)
  --no-wait                 enqueue and exit
  --new-run                 start a new run of the queue instead of joining its open one
  (the Redis password: REDISCLI_AUTH in the environment, for a URL that carries none)
  (the sites join the queue's open run, which ends 1h after its last use: a site it finished is
  not walked again, its result is told; a site already waiting or being walked is not enqueued
  twice; jobs that failed after their retries, and jobs Redis lost (a restart without
  persistence), are listed at the end and make the exit status 1)

${NETWORK_HELP}
  (--concurrency is per site; the sites listed may be on private addresses without
  --allow-private-networks, as the URL of usp ls may, but what their sitemaps point to may not)

exit status:
  0  the run finished (sites that were unreachable or invalid are rows in sites.ndjson)
  1  the run could not go on: output not writable or full (the sites written before are kept:
     free space and --resume), --out holding another run or being written by one, state file
     locked by another run or not a state file (one line on stderr; nothing is deleted)
  2  usage error`;

/** The one line of a run stopped by its output or state; a full disk says how to go on. */
function stoppedText(err: Error): string {
  return isFullDisk(err)
    ? `${err.message}; free some space, then run the same command with --resume`
    : err.message;
}

export async function runBatch(args: string[], signal: AbortSignal): Promise<number> {
  const p = parse(args, BATCH_OPTIONS, BATCH_USAGE);
  if (flag(p, 'help')) {
    process.stdout.write(`${BATCH_HELP}\n`);
    return 0;
  }
  const source = onePositional(p, 'sites-file', BATCH_USAGE);
  if (str(p, 'queue') !== undefined) {
    // The producer adds a job and takes its end per site: the same few functions, many times.
    tuneJitForBatch();
    // Loaded only here: BullMQ and its Redis client are for the distributed mode.
    const { runQueuedBatch } = await loadOptionalPackage(
      '@usp-ts/queue-bullmq',
      'usp batch --queue',
      () => import('./batch-queue.js'),
    );
    return runQueuedBatch(p, source, BATCH_USAGE, signal);
  }
  const out = str(p, 'out');
  if (out === undefined) throw new UsageError('the following arguments are required: --out', BATCH_USAGE);
  const flags = await siteRunFlags(p, BATCH_USAGE);
  const counted = await countSitesOrSay(source);
  if (counted === null) return 1;
  const listed = listedOrigins();
  const run = await openSiteRun(
    flags,
    out,
    { resume: flag(p, 'resume'), signal },
    BATCH_USAGE,
    listed.allows,
  );
  if (run === 1) return 1;
  // A run stopped before its end (a signal, a full disk) stays open in a store that records runs,
  // so that --resume goes on with it.
  let ended = false;
  try {
    const done = run.output.sink.done;
    flags.report.total = counted.total;
    // After the client, the state and the sink have loaded what they need (undici, node:http,
    // SQLite): both set V8 flags, and Node compiles a built-in module from its code cache only
    // while V8's flags are the defaults. The cap first: it loads perf_hooks before its own flags
    // (and watches V8's flags only when a worker thread starts, which a batch never does).
    collectOnExternalGrowth(BATCH_EXTERNAL_STEP_MB, undefined, BATCH_COLLECT_ABOVE_RSS_MB);
    capSemiSpaces(BATCH_SEMI_SPACE_MB);
    scavengeOnOneThread();
    tuneJitForBatch();
    detachArrayBufferOnce();
    const results = batchWalk(listed.note(inputLines(source)), {
      ...run.options,
      ...(flag(p, 'full') ? { full: true } : {}),
      isDone: (site) => done.has(site),
      signal,
      onProgress: (progress) => flags.report.update(progress),
    });
    try {
      for await (const r of results as AsyncIterable<SiteResult>) run.logSite(r);
    } catch (err) {
      return stopped(err, flags.report, stoppedText);
    }
    run.say(flags.report.summary());
    ended = signal.aborted !== true;
    return 0;
  } finally {
    await run.close({ ended });
  }
}
