import { setFlagsFromString } from 'node:v8';
import { JIT_BUDGET_V8, mayTuneV8 } from './v8-flags.js';

/** V8's default `--interrupt-budget` (V8 11, Node 20). */
export const V8_DEFAULT_INTERRUPT_BUDGET = 67_584;
/** How much more bytecode a function runs before V8 optimises it, in a batch or worker process. */
export const BATCH_INTERRUPT_BUDGET_FACTOR = 4;

let tuned = false;

/** JIT flags a process may be given: then it is left as it is. */
const JIT_FLAGS = /interrupt-budget|jitless|(?:^|\s)--(?:no-)?(?:opt|turbofan|maglev)\b/;

/**
 * A batch runs the same few hundred functions once or a few times per site (the job, the walk,
 * undici's request and connection code, the state and the sinks), and nearly all of them get
 * hot enough for V8's optimising compiler within the first hundred sites. Each of those compiles
 * is large (async functions with much inlined), and in a run of 1,000 sites with nothing to fetch
 * the compiles took more instructions than the batch thread itself (callgrind: 4.3 G against
 * 4.0 G), on the same two cores. With a larger interrupt budget only functions that run much
 * longer are optimised. `usp worker` runs the same job, so it does the same, and so does the
 * producer (`usp batch --queue`: per site, a job added and its end read; callgrind, 1,000 jobs:
 * 1.50 M instructions per site before, 1.23 M with it). Process-wide, so
 * for the CLI's own process only, never the library;
 * nothing is done on another V8 than Node 20's (V8 12 has no `--interrupt-budget`) or when the
 * process was given its own JIT flags.
 */
export function tuneJitForBatch(): void {
  if (tuned || !mayTuneV8(JIT_FLAGS, JIT_BUDGET_V8)) return;
  tuned = true;
  setFlagsFromString(`--interrupt-budget=${V8_DEFAULT_INTERRUPT_BUDGET * BATCH_INTERRUPT_BUDGET_FACTOR}`);
}

let detached = false;

/**
 * Detaches one ArrayBuffer of its own, once, before the batch's code is optimised. V8 compiles
 * typed-array code without checks for a detached buffer for as long as no ArrayBuffer has ever
 * been detached (its `ArrayBufferDetaching` protector); the first detach anywhere deoptimises
 * every function compiled so. A batch's first one came mid-run: undici's HTTP parser is
 * WebAssembly whose memory grows as it takes larger socket reads and more connections, and a
 * grown memory detaches its old buffer. In a fresh 1,000-site run that threw away 74 optimised
 * functions at once (the XML scanner, llhttp's callbacks, the digests, the microtask loop), and
 * ~40 of them were compiled again (~0.1 s of TurboFan). Done first, nothing is compiled twice for
 * it. Unlike the V8 flags, for every V8 and whatever flags the process was given.
 */
export function detachArrayBufferOnce(): void {
  if (detached) return;
  detached = true;
  const buffer = new ArrayBuffer(8);
  structuredClone(buffer, { transfer: [buffer] });
}
