import { ProgressCounter, readSiteLines, type SiteResult } from '@usp-ts/batch';
import { DEFAULT_QUEUE_NAME, enqueueSites } from '@usp-ts/queue-bullmq';
import { count, flag, type Parsed, redisUrl, str, UsageError } from './args.js';
import { BatchReport, siteLine } from './batch-report.js';
import { countSitesOrSay, inputLines } from './input-lines.js';

/** The flags that mean something to the producer; the walk's own belong to `usp worker`. */
const PRODUCER_FLAGS = new Set([
  'queue',
  'queue-name',
  'no-wait',
  'new-run',
  'full',
  'verbose',
  'no-progress',
  'help',
]);

/**
 * `usp batch SITES --queue redis://…`: one job per site on the queue (invalid lines are reported
 * here, as the local batch reports them), then the same progress line and summary as the local
 * batch from the results the workers send back; `--no-wait` enqueues and exits.
 */
export async function runQueuedBatch(
  p: Parsed,
  source: string,
  usage: string,
  signal: AbortSignal,
): Promise<number> {
  const queue = redisUrl(str(p, 'queue') as string, 'queue', usage);
  for (const [name, value] of Object.entries(p.values)) {
    if (value !== undefined && !PRODUCER_FLAGS.has(name)) {
      throw new UsageError(
        `option --${name} belongs to the workers with --queue (see usp worker --help)`,
        usage,
      );
    }
  }
  const queueName = str(p, 'queue-name') ?? DEFAULT_QUEUE_NAME;
  const wait = !flag(p, 'no-wait');
  const verbose = count(p, 'verbose');
  const counted = await countSitesOrSay(source);
  if (counted === null) return 1;
  const { total } = counted;

  const report = new BatchReport(!flag(p, 'no-progress'));
  report.total = total;
  // Counted as the local batch counts: a site by its worker's result, or by how its job ended.
  const counter = new ProgressCounter((progress) => report.update(progress));
  const invalid: string[] = [];
  async function* validSites(): AsyncGenerator<string> {
    for await (const line of readSiteLines(inputLines(source))) {
      if (line.kind === 'site') yield line.site;
      else invalid.push(`line ${line.line}: ${JSON.stringify(line.text)}`);
    }
  }
  try {
    const done = await enqueueSites<SiteResult>(validSites(), {
      connection: queue,
      queueName,
      wait,
      ...(flag(p, 'full') ? { full: true } : {}),
      ...(flag(p, 'new-run') ? { newRun: true } : {}),
      signal,
      onConnection: (state, address) => {
        report.clear();
        process.stderr.write(
          state === 'away'
            ? `usp batch: Redis at ${address} went away; waiting\n`
            : `usp batch: Redis at ${address} is back\n`,
        );
      },
      onActive: (active) => counter.active(active),
      onEnqueued: (r) => {
        if (verbose > 0 || !wait || r.doneBefore > 0) {
          report.clear();
          process.stderr.write(
            `usp batch: ${r.sites} sites on ${queueName} (run ${r.run}): ${r.added} added, ${r.alreadyQueued} already queued${r.doneBefore > 0 ? `, ${r.doneBefore} finished earlier in this run (not walked again; --new-run walks them)` : ''}${r.requeued > 0 ? `, ${r.requeued} failed before and enqueued again` : ''}\n`,
          );
        }
      },
      onResult: (o) => {
        if (!o.ok) counter.endedAs(o.lost === true ? 'lost' : 'failed job');
        else {
          counter.ended(o.result);
          if (verbose > 0) report.log(siteLine(o.result));
        }
      },
    });
    report.clear();
    if (invalid.length > 0) {
      // Sites of the run as the local batch counts them: in the summary's total and its statuses.
      for (const _ of invalid) counter.endedAs('invalid');
      process.stderr.write(`usp batch: not a site URL, not enqueued: ${invalid.join('; ')}\n`);
    }
    if (!wait) return 0;
    if (signal.aborted) {
      process.stderr.write(
        `usp batch: stopped waiting; ${done.sites - done.finished} sites are still queued\n`,
      );
      return 0;
    }
    process.stderr.write(`${report.summary()}\n`);
    if (done.lost.length > 0) {
      // Redis forgot them (a restart without persistence): nobody walks them now.
      process.stderr.write(
        `usp batch: ${done.lost.length} sites lost with Redis's data (no persistence?); enqueue them again:\n`,
      );
      for (const site of done.lost) process.stderr.write(`  ${site}\n`);
    }
    if (done.failed.length > 0) {
      // Not a site problem (those are rows): a worker could not write or save, or a bug.
      process.stderr.write(`usp batch: ${done.failed.length} jobs failed after their retries:\n`);
      for (const f of done.failed) {
        process.stderr.write(`  ${f.site}: ${f.error} (${f.attempts} tries)\n`);
      }
    }
    return done.failed.length > 0 || done.lost.length > 0 ? 1 : 0;
  } finally {
    report.clear();
  }
}
