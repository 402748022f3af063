import { setFlagsFromString } from 'node:v8';
import { mayTuneV8 } from './v8-flags.js';

/** Scavenger flags a process may be given: then it is left as it is. */
const SCAVENGE_FLAGS = /(?:^|\s)--(?:no-)?parallel-scavenge\b|single-threaded/;

let tuned = false;

/**
 * Makes V8 scavenge on the thread that allocates only. By default each scavenge of the batch's
 * semi-spaces is split into five tasks (V8's platform has four helper threads, whatever the
 * cores): a batch makes ~600 scavenges a 1,000-site fresh run, and the split's stealing,
 * waiting and wake-ups are work the scavenge itself does not need (the fresh job without HTTP:
 * 3.5 % fewer instructions in all threads, the main thread's unchanged; callgrind). A batch is
 * bound by its sites, not by a scavenge's pause, so its CPU is what counts. Process-wide and read
 * at each scavenge; for the CLI's own process only, on a V8 it knows, and never when the process
 * was given scavenger flags.
 */
export function scavengeOnOneThread(): void {
  if (tuned || !mayTuneV8(SCAVENGE_FLAGS)) return;
  tuned = true;
  setFlagsFromString('--no-parallel-scavenge');
}
