import { createRequire } from 'node:module';
import type { buildConnector } from 'undici';

/** V8's default `--wasm-tiering-budget` in the V8 versions this is enabled for. */
const V8_DEFAULT_BUDGET = 1_800_000;
/** Far more than the headers of thousands of responses use up. */
const PARSER_BUDGET = 1_000_000_000;
/** Node 20 (V8 11.3) and 22 (V8 12.4), where the flag and its default are known. */
const KNOWN_V8 = /^1[12]\./;

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
 * undici's HTTP parser (llhttp) is one WebAssembly state-machine function, instantiated once per
 * process at undici's first connection. V8's dynamic tiering budget for it runs out within the
 * first few hundred header bytes, and the optimising re-compile of that one function then costs
 * 0.2-0.35 s of CPU on a background thread and ~35 MiB of peak memory, whether one request
 * follows or a million. Its baseline code is fast enough (bodies pass through it in spans), so
 * the budget is raised for exactly that instantiation: undici creates the instance synchronously
 * inside the connect callback, and the default is restored as soon as the callback returns. No
 * other module is affected, and nothing is done when the process tunes wasm itself.
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
      setFlagsFromString(`--wasm-tiering-budget=${PARSER_BUDGET}`);
      try {
        callback(...args);
      } finally {
        setFlagsFromString(`--wasm-tiering-budget=${V8_DEFAULT_BUDGET}`);
      }
    });
}
