import { cachedDataVersionTag, getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import type { Worker } from 'node:worker_threads';
import { mayTuneV8 } from './v8-flags.js';

const MIB = 1024 * 1024;
/**
 * Longest the main thread waits for a starting worker's heap: a thread start and one isolate
 * allocation, 5-20 ms measured at load 5. Only a worker that fails before V8 makes its heap (out
 * of memory) takes this long; its 'online' never comes either.
 */
const HEAP_WAIT_MS = 10_000;
const PROBE_SLEEP_MS = 0.2;
/** Survivors kept while growing the young generation: 32 KiB arrays, a few per scavenge. */
const SURVIVOR_LENGTH = 4096;
const SURVIVOR_BYTES = SURVIVOR_LENGTH * 8;

let installed = false;

/** Heap flags a process may be given: then it is left as it is. */
const HEAP_FLAGS = /semi-space|max-heap-size|single-generation/;

/** This thread's young generation, both semi-spaces, bytes. */
function youngGenerationBytes(): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

/**
 * Grows this thread's young generation to `bytes` now rather than during the walk: V8 doubles the
 * semi-spaces at a scavenge once more than their size survived since the last doubling, so
 * about half a semi-space is kept alive across scavenges until it has (3 MiB allocated and 2-5 ms
 * for 4 MiB semi-spaces). Bounded by what it allocates, in case V8 grows no more.
 */
function growYoungGeneration(bytes: number): void {
  let kept: number[][] = [];
  for (let allocated = 0; youngGenerationBytes() < bytes && allocated < 32 * bytes; ) {
    for (let i = 0; i < 8; i++) kept.push(new Array<number>(SURVIVOR_LENGTH).fill(0));
    allocated += 8 * SURVIVOR_BYTES;
    const keep = Math.ceil(youngGenerationBytes() / 4 / SURVIVOR_BYTES);
    if (kept.length > keep) kept = kept.slice(kept.length - keep);
  }
}

/**
 * Whether the growth factor is still the one this thread set. V8 hashes its non-default flags
 * (`cachedDataVersionTag`) and keeps the hash until a flag is set through the API, but a new
 * isolate writes the factor directly: setting an unchanged flag drops the stale hash.
 */
function factorStillSet(capped: number, maxMb: number): boolean {
  setFlagsFromString(`--min-semi-space-size=${maxMb}`);
  return cachedDataVersionTag() === capped;
}

/**
 * Keeps this thread's young generation at semi-spaces of exactly `maxMb` MiB (a power of two; or
 * their size now, if already larger), from a running process. V8 doubles a main thread's
 * semi-spaces up to 16 MiB each as scavenges go on, and they stay committed (32 MiB of RSS);
 * `--max-semi-space-size` cannot be given to a process that is already running, and a worker
 * thread's `resourceLimits` (what `usp batch` used until session 12) measured worse: the thread's
 * own isolate, its start-up and its stdout relayed through the main thread cost more than they save.
 *
 * What V8 reads at each doubling is `--semi-space-growth-factor`: the young generation is grown to
 * the cap here, then the factor is set to 1. The flag is process-wide, and V8's heap setup of every
 * new isolate (`Heap::ConfigureHeap`, on the new thread, before it runs any JavaScript; the only
 * other write, seen with a hardware watchpoint) puts a factor below 2 back to 2. So when a worker
 * thread starts, this thread waits, before running any more JavaScript, until V8 has set up the
 * worker's heap (the factor is back at 2: 5-20 ms), and sets it to 1 again. Left out: workers that
 * start in the same tick (their resets cannot be told apart; the factor is set again at each one's
 * 'online', and the young generation may double in between), workers started before this call,
 * and V8 flags set by others after it (the waits, which watch V8's flags, then end at once).
 * A thread started later starts at the cap (V8 reads `--min-semi-space-size` when it makes an
 * isolate), or at its own maximum if lower; it cannot grow. This is for the CLI's own process,
 * never the library. Nothing is done on an unknown V8 or when the process was given heap flags.
 */
export function capSemiSpaces(maxMb: number): void {
  // One cap a process (the flag is process-wide): a second command run in the same process
  // adds no listener.
  if (installed || !mayTuneV8(HEAP_FLAGS)) return;
  installed = true;
  // Node compiles a built-in module from its code cache only while V8's flags are the defaults:
  // `performance` (this wait, the fetcher's time budgets) is loaded now, not from source later.
  const clock = performance;
  setFlagsFromString(`--min-semi-space-size=${maxMb}`);
  growYoungGeneration(2 * maxMb * MIB);
  const setFactor = () => setFlagsFromString('--semi-space-growth-factor=1');
  setFactor();
  const capped = cachedDataVersionTag();
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  let starting = 0;
  process.on('worker', (worker: Worker) => {
    worker.once('online', setFactor);
    // 'worker' comes in a tick queued by the constructor: after every worker made in that tick.
    starting++;
    if (starting > 1) return;
    process.nextTick(() => {
      const alone = starting === 1;
      starting = 0;
      if (!alone) return;
      const deadline = clock.now() + HEAP_WAIT_MS;
      while (factorStillSet(capped, maxMb) && clock.now() < deadline) {
        Atomics.wait(sleeper, 0, 0, PROBE_SLEEP_MS);
      }
      setFactor();
    });
  });
}
