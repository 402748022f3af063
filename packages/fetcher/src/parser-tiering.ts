import { createRequire } from 'node:module';
import type { buildConnector } from 'undici';

/**
 * What the parser's module is compiled with, and V8's defaults put back right after: every
 * function compiled at once with the baseline compiler (Liftoff), and no function allowed to
 * tier up (an index no function has), so the compiled code carries no tiering budget at all.
 */
const BASELINE_ONLY = '--no-wasm-lazy-compilation --wasm-tier-up-filter=2147483647';
const V8_DEFAULTS = '--wasm-lazy-compilation --wasm-tier-up-filter=-1';
/** Node 20 (V8 11.3), 22 (V8 12.4) and 24 (V8 13.6), whose V8 reads these flags when it compiles a module. */
const KNOWN_V8 = /^1[123]\./;

let parserSeen = false;

// Loaded at the first connection rather than with the module: a parse-only program never needs it.
const require = createRequire(import.meta.url);
function setFlagsFromString(flags: string): void {
  (require('node:v8') as typeof import('node:v8')).setFlagsFromString(flags);
}

function userTunedWasm(): boolean {
  const flags = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
  return /wasm|liftoff|jitless/.test(flags);
}

/**
 * undici's HTTP parser (llhttp) is one WebAssembly state-machine function, compiled and
 * instantiated once per thread at undici's first connection. Its baseline code is fast enough
 * (bodies pass through it in spans), but V8's dynamic tiering re-compiles it with the optimising
 * compiler once its budget runs out: 0.2-0.35 s of CPU on a background thread and ~35 MiB of peak
 * memory, whatever follows. The budget is counted in code bytes per loop turn of that one big
 * function, so even the largest budget V8 takes lasts only ~60 KB of headers: `usp batch` (2,500
 * small 304 answers in a no-change run of 1,000 sites) paid the re-compile in every run. So the
 * module is compiled without tiering: undici compiles it synchronously inside the connect
 * callback, V8 reads these flags when it compiles (the module's tiers, and whether a function's
 * code counts a budget), and the defaults are back as soon as the callback returns. No other
 * module is affected, and nothing is done when the process tunes wasm itself.
 */
export function withParserTiering(connect: buildConnector.connector): buildConnector.connector {
  return (options, callback) =>
    connect(options, (...args) => {
      if (parserSeen || args[0] !== null) {
        callback(...args);
        return;
      }
      parserSeen = true;
      if (!KNOWN_V8.test(process.versions.v8) || userTunedWasm()) {
        callback(...args);
        return;
      }
      setFlagsFromString(BASELINE_ONLY);
      try {
        callback(...args);
      } finally {
        setFlagsFromString(V8_DEFAULTS);
      }
    });
}
