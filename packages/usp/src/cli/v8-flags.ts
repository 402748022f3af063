/** Node 20 (V8 11.3) and 22 (V8 12.4), whose flags the CLI sets and whose use of them is known. */
export const KNOWN_V8 = /^1[12]\./;

/**
 * Node 20's V8 (11.3), the one with `--interrupt-budget`: V8 12 (Node 22) counts invocations
 * instead and prints "unrecognized flag" for it. The batch's JIT budget was measured there only.
 */
export const JIT_BUDGET_V8 = /^11\./;

/** Whether this process's V8 is one the CLI tunes (tests of the tuning run only there). */
export const TUNES_THIS_V8 = KNOWN_V8.test(process.versions.v8);

/** Whether the CLI sets this process's JIT budget (tests of it run only there). */
export const TUNES_JIT_OF_THIS_V8 = JIT_BUDGET_V8.test(process.versions.v8);

/**
 * Whether the CLI may set V8 flags of a kind: on a V8 it knows, and only when the process was not
 * given flags of that kind (`given`, matched against its command line and `NODE_OPTIONS`): a
 * user's own tuning wins. `known`: the V8 versions that have those flags (default {@link KNOWN_V8}).
 */
export function mayTuneV8(given: RegExp, known: RegExp = KNOWN_V8): boolean {
  if (!known.test(process.versions.v8)) return false;
  return !given.test(`${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`);
}
