import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import type { Worker } from 'node:worker_threads';

/** Node 20 (V8 11.3) and 22 (V8 12.4), where the flag and V8's use of it are known. */
const KNOWN_V8 = /^1[12]\./;
const MIB = 1024 * 1024;
/** Often enough that the young generation doubles at most once past the cap (a doubling takes seconds in a walk). */
const CHECK_MS = 20;

let installed = false;

function userTunedHeap(): boolean {
  const flags = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
  return /semi-space|max-heap-size|single-generation/.test(flags);
}

/**
 * Keeps this thread's young generation at semi-spaces of at most `maxMb` MiB, from a running
 * process. V8 doubles a main thread's semi-spaces up to 16 MiB each as scavenges go on, and they
 * stay committed (32 MiB of RSS); `--max-semi-space-size` cannot be given to a process that is
 * already running, and a worker thread's `resourceLimits` (as `usp batch` uses, command-thread.ts)
 * measured worse for `usp ls`: the thread's own isolate and its stdout relayed through the main
 * thread cost more than they save. What V8 reads at each doubling is `--semi-space-growth-factor`:
 * once the young generation reaches the cap the factor is set to 1, so it stops growing. Every
 * new isolate (a parse worker starting) puts a factor below 2 back to 2, so the factor is set again
 * at every check and when a worker comes online. The flag is process-wide, so a worker's young
 * generation could not grow either: threads started after this start at the cap (V8 reads
 * `--min-semi-space-size` when it makes an isolate). This is for the CLI's own process, never the
 * library. Nothing is done on an unknown V8 or when the process was given its own heap flags.
 */
export function capSemiSpaces(maxMb: number): void {
  // One cap a process (the flag is process-wide): a second command run in the same process
  // adds no timer or listener.
  if (installed || !KNOWN_V8.test(process.versions.v8) || userTunedHeap()) return;
  installed = true;
  // A thread started later could not grow its young generation at all once the factor is 1:
  // it starts at the cap instead (or at its own maximum, if lower; a parse worker's is 2 MiB).
  setFlagsFromString(`--min-semi-space-size=${maxMb}`);
  let capped = false;
  const check = (): void => {
    if (!capped) {
      const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
      // `space_size` is both semi-spaces.
      capped = young !== undefined && young.space_size >= 2 * maxMb * MIB;
    }
    if (capped) setFlagsFromString('--semi-space-growth-factor=1');
  };
  setInterval(check, CHECK_MS).unref();
  // A thread's isolate is made before its 'online' event: the factor is set again at once.
  process.on('worker', (worker: Worker) => worker.once('online', check));
}
