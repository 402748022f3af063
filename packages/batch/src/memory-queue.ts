import type { JobLease, QueueConsumer, SiteQueue, SiteWalker, TryOutcome } from './queue-port.js';
import type { SiteResult } from './rows.js';
import type { SiteJob } from './site-job.js';

/** Options of `memorySiteQueue`. */
export interface MemorySiteQueueOptions {
  /** Tries of a job that fails, the first included (default 3). */
  readonly attempts?: number;
  /** A consumer ends on its own once nothing is waiting or being walked (default `false`: waits for `stop`). */
  readonly stopWhenIdle?: boolean;
  /** Each site's kept result, as the engine records it. */
  readonly onResult?: (result: SiteResult) => void;
  /** A job that failed all its tries. */
  readonly onFailed?: (site: string, error: unknown) => void;
}

interface Entry {
  readonly job: SiteJob;
  tries: number;
  /** Copies earlier tries kept (confirmed) without the job being recorded as done. */
  readonly copies: string[];
}

/**
 * The reference queue engine (`SiteQueue`): in one process, in memory. What it does is what an
 * engine must do: one job per site however often it is enqueued while waiting or walked, tries
 * handed out `concurrency` at a time, each try's copy named and the copies of earlier tries made
 * void by the next one's `confirm`, a released job put back first, a failed one retried.
 */
export function memorySiteQueue(
  options: MemorySiteQueueOptions = {},
): SiteQueue & { readonly results: Map<string, SiteResult> } {
  const attempts = options.attempts ?? 3;
  const waiting: Entry[] = [];
  const active = new Map<string, Entry>();
  const results = new Map<string, SiteResult>();
  const kicks = new Set<() => void>();
  const wake = () => {
    for (const kick of kicks) kick();
    kicks.clear();
  };
  let nextCopy = 0;
  return {
    results,
    async enqueue(jobs) {
      let added = 0;
      for await (const job of jobs) {
        if (active.has(job.site) || waiting.some((e) => e.job.site === job.site)) continue;
        results.delete(job.site);
        waiting.push({ job, tries: 0, copies: [] });
        added++;
      }
      wake();
      return added;
    },
    consume(walk: SiteWalker, { concurrency }): QueueConsumer {
      const stop = new AbortController();
      const tries = new Set<Promise<void>>();
      const runTry = async (entry: Entry): Promise<void> => {
        entry.tries++;
        const token = `copy-${++nextCopy}`;
        const lease: JobLease = {
          signal: stop.signal,
          async confirm() {
            if (active.get(entry.job.site) !== entry) throw new Error(`${entry.job.site}: not this try's`);
            const voids = entry.copies.splice(0);
            entry.copies.push(token);
            return { token, voids };
          },
        };
        let outcome: TryOutcome | { failed: unknown };
        try {
          outcome = await walk(entry.job, lease);
        } catch (error) {
          outcome = { failed: error };
        }
        active.delete(entry.job.site);
        if ('kept' in outcome) {
          results.set(entry.job.site, outcome.kept);
          options.onResult?.(outcome.kept);
        } else if ('released' in outcome || entry.tries < attempts) {
          if ('released' in outcome) entry.tries--;
          waiting.unshift(entry);
        } else options.onFailed?.(entry.job.site, outcome.failed);
      };
      const closed = (async () => {
        while (!stop.signal.aborted) {
          while (tries.size < concurrency && waiting.length > 0 && !stop.signal.aborted) {
            const entry = waiting.shift() as Entry;
            active.set(entry.job.site, entry);
            const t: Promise<void> = runTry(entry).finally(() => {
              tries.delete(t);
              wake();
            });
            tries.add(t);
          }
          if (options.stopWhenIdle === true && tries.size === 0 && waiting.length === 0) break;
          await new Promise<void>((resolve) => kicks.add(resolve));
        }
        await Promise.allSettled(tries);
      })();
      return {
        stop() {
          stop.abort();
          wake();
          return closed;
        },
        closed,
      };
    },
  };
}
