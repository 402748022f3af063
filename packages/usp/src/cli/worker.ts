import { hostname } from 'node:os';
import { OutputError, StateStoreError } from '@usp-ts/batch';
import { assertRedisReachable, DEFAULT_QUEUE_NAME, runWorker, voidedCopies } from '@usp-ts/queue-bullmq';
import { duration, flag, type OptionSpec, type Parsed, parse, redisUrl, str, UsageError } from './args.js';
import { detachArrayBufferOnce, tuneJitForBatch } from './batch-jit.js';
import { NETWORK_HELP } from './network.js';
import { SITE_RUN_PLUGIN_HELP } from './plugin-flags.js';
import { isFullDisk, openSiteRun, siteRunFlags, stopped } from './site-run.js';
import { SITE_WALK_OPTIONS } from './site-walk.js';

export const WORKER_USAGE =
  'usage: usp worker [-h] --queue URL --out DIR|postgres://... [--worker-id ID] [--state URL|FILE] [options]';

const WORKER_OPTIONS = {
  ...SITE_WALK_OPTIONS,
  queue: { type: 'string' },
  'queue-name': { type: 'string' },
  'worker-id': { type: 'string' },
  'lock-duration': { type: 'string' },
  'exit-when-idle': { type: 'boolean' },
} satisfies OptionSpec;

export const WORKER_HELP = `${WORKER_USAGE}

take the sites "usp batch --queue" put on a Redis queue and walk them, N at a time, with the same
walk as "usp batch"; run as many workers as you like, on as many machines. Each worker writes its
own pages.ndjson, sitemaps.ndjson, sites.ndjson and journal.ndjson under DIR/<worker-id>/, or all
workers write one PostgreSQL database (--out postgres://...), and sends each site's result (status
and counts) back to the producer. SIGTERM or Ctrl-C: stop taking sites,
hand the unfinished ones back to the queue (they are walked again from the start), exit 0. A Redis
(--queue, or --state redis://...) that does not answer a PING within 5s at start is an error (exit 1,
one line); one that goes away once the worker runs is waited for ("Redis at HOST:PORT went away;
waiting", then "... is back"), and the worker goes on.

options:
  -h, --help                show this help message and exit
  --queue URL               the queue's Redis: redis://HOST:PORT[/DB] (required; default the
                            environment's USP_REDIS_URL)
  --queue-name NAME         the queue (default ${DEFAULT_QUEUE_NAME})
  -o, --out DIR|postgres://USER@HOST[:PORT]/DB|postgres:
                            where the rows go (required). A DIR: this worker writes
                            DIR/<worker-id>/. A PostgreSQL database (postgres: alone reads PGHOST,
                            PGUSER, PGPASSWORD, ...; needs @usp-ts/store-postgres): shared by every
                            worker, each site's rows and its state committed in one transaction
                            under the queue's run, a site walked twice in a run (a kill, the list
                            enqueued twice) kept once; the state is kept there too (leave out
                            --state, or give the same URL)
  --worker-id ID            this worker's name and output subdirectory (default <host>-<pid>): a
                            plain name (letters, digits, . _ -, not starting with a dot); one worker
                            at a time writes it (a second exits 1 naming the first: pid, host, since);
                            restarted with the same id, a worker cuts what a kill left half-written
                            there, and the copies of sites walked again elsewhere after the kill,
                            and appends after it
  --state redis://HOST[:PORT][/DB]|FILE|sqlite:FILE
                            incremental state: a Redis shares it between all workers (usually
                            the queue's server); a SQLite FILE suits one machine only
  --lock-duration DURATION  a worker that dies (kill -9, machine lost) has its sites walked by
                            another after about twice this (default 30s)
  --exit-when-idle          exit once the queue is drained: nothing waiting, delayed or active on
                            any worker, and no producer adding sites, for 3s in a row (a worker
                            may start before its producer; a dead worker's sites are taken over)
  --gzip                    write .ndjson.gz files
  --full-every DURATION     a full walk of a site when its last one is older (e.g. 7d; default never)
  --sites N                 sites walked at once by this worker (default 16)
  --per-host N              requests in flight to one host name at most, across all workers
                            (default 2); by name, not address: localhost and 127.0.0.1 are two
  --max-crawl-delay DURATION
                            longest robots.txt Crawl-delay honoured, across all workers (default 10s)
  --site-deadline DURATION  each site's time budget (default 10m)
  --probe-timeout DURATION  with --state, a site that gave no answer last run gets one request
                            (robots.txt, no retry) waiting this long, and is walked only if it
                            answers (default 1.5s; not on full walks)
  -r, --no-robots, -k, --no-known, --extra-known-path PATH, --wp, --sitemap-txt, --max-depth N,
  --max-sitemaps N, --max-pages N
                            as for usp batch
${SITE_RUN_PLUGIN_HELP}
  -v, --verbose             a line per site on stderr
  --no-progress             no progress line (it shows only when stderr is a terminal)

${NETWORK_HELP}

environment:
  USP_REDIS_URL             the queue's Redis when --queue is not given
  REDISCLI_AUTH             the Redis password for a --queue or --state URL that carries none
                            (as redis-cli takes it; a password in a URL shows in ps)

exit status:
  0  stopped by SIGTERM/SIGINT or --exit-when-idle
  1  could not start or go on: Redis unreachable at start (no answer within 5s), output not
     writable or full (the sites written before are kept: free space and start the worker again
     with the same --out and --worker-id), --out/<id> holding another kind of run, state file
     locked or corrupt (one line on stderr)
  2  usage error`;

/**
 * The one line of a worker stopped by its output or state; a full disk says how to go on (its
 * directory is taken up again at the next start, and the sites it had in hand went back to the
 * queue when their locks lapsed).
 */
function stoppedText(err: Error): string {
  return isFullDisk(err)
    ? `${err.message}; free some space, then start the worker again with the same --out and --worker-id`
    : err.message;
}

/** The worker's own flags: the queue, its name, this worker's name and lock. */
function workerFlags(p: Parsed) {
  // USP_REDIS_URL keeps a URL with its password out of the command line (and out of ps).
  const queueOption = str(p, 'queue') ?? (process.env.USP_REDIS_URL || undefined);
  if (queueOption === undefined)
    throw new UsageError('the following arguments are required: --queue (or USP_REDIS_URL)', WORKER_USAGE);
  const queue = redisUrl(queueOption, 'queue', WORKER_USAGE);
  const out = str(p, 'out');
  if (out === undefined) throw new UsageError('the following arguments are required: --out', WORKER_USAGE);
  const workerId = str(p, 'worker-id') ?? `${hostname()}-${process.pid}`;
  // A plain name, one directory under --out: not `.` or `..` (the output itself, or its parent),
  // not hidden, no separator.
  if (!/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$/.test(workerId)) {
    throw new UsageError(
      `option --worker-id expects a plain name (letters, digits, . _ -, not starting with a dot, at most 100), got ${JSON.stringify(workerId)}`,
      WORKER_USAGE,
    );
  }
  const queueName = str(p, 'queue-name') ?? DEFAULT_QUEUE_NAME;
  if (queueName === '' || queueName.includes(':')) {
    throw new UsageError(
      `option --queue-name expects a name without ':', got ${JSON.stringify(queueName)}`,
      WORKER_USAGE,
    );
  }
  const lockDurationMs = duration(p, 'lock-duration', WORKER_USAGE);
  return { queue, out, workerId, queueName, lockDurationMs };
}

export async function runWorkerCommand(args: string[], signal: AbortSignal): Promise<number> {
  const p = parse(args, WORKER_OPTIONS, WORKER_USAGE);
  if (flag(p, 'help')) {
    process.stdout.write(`${WORKER_HELP}\n`);
    return 0;
  }
  if (p.positionals.length > 0) {
    throw new UsageError(`unrecognized arguments: ${p.positionals.join(' ')}`, WORKER_USAGE);
  }
  const { queue, out, workerId, queueName, lockDurationMs } = workerFlags(p);
  const flags = await siteRunFlags(p, WORKER_USAGE);
  // A Redis that is not there at start is a mistake to say at once (one line, exit 1); once
  // started, the worker waits for a Redis that goes away (a restart) and goes on. The state's
  // Redis, when it has one, is checked as it opens.
  await assertRedisReachable(queue, { signal });
  // The same site job as usp batch, so the same JIT setting (see batch-jit.ts).
  tuneJitForBatch();
  detachArrayBufferOnce();
  // A worker restarted under its id goes on with its own run: a kill's half-written tail is cut,
  // and so is any copy of a site that another worker walked again and completed (here and at exit).
  const run = await openSiteRun(
    flags,
    out,
    {
      writer: workerId,
      resume: 'if-any',
      signal,
      voidedCopies: (tokens) => voidedCopies(tokens, { connection: queue, queueName }),
      onDropped: (dropped) => {
        if (flags.verbose === 0) return;
        flags.report.clear();
        for (const site of dropped) {
          process.stderr.write(`usp: ${site}: copy dropped, walked again by another worker after a kill\n`);
        }
      },
    },
    WORKER_USAGE,
  );
  if (run === 1) return 1;
  let failure: Error | null = null;
  try {
    const worker = runWorker({
      ...run.options,
      connection: queue,
      queueName,
      name: workerId,
      ...(lockDurationMs !== undefined ? { lockDurationMs, stalledIntervalMs: lockDurationMs } : {}),
      ...(flag(p, 'exit-when-idle') ? { stopWhenIdle: true } : {}),
      onResult: (r) => run.siteEnded(r),
      onConnection: (state, address) =>
        run.say(`usp: Redis at ${address} ${state === 'away' ? 'went away; waiting' : 'is back'}`),
      onError: (error) => {
        // The output or the state failing is this worker's end; Redis trouble is retried by ioredis.
        if (error instanceof OutputError || error instanceof StateStoreError) {
          failure ??= error;
          void worker.stop();
        } else if (flags.verbose > 0) run.say(`usp: worker: ${error.message}`);
      },
    });
    const onAbort = () => void worker.stop();
    signal.addEventListener('abort', onAbort, { once: true });
    if (flags.verbose > 0) {
      process.stderr.write(`usp: worker ${workerId} on ${queueName}, writing ${run.output.where}\n`);
    }
    await worker.closed;
    signal.removeEventListener('abort', onAbort);
    if (failure !== null) return stopped(failure, flags.report, stoppedText);
    run.say(flags.report.summary(`usp worker ${workerId}`));
    return 0;
  } finally {
    await run.close();
  }
}
