// BullMQ 6 and ioredis are CommonJS packages without an "exports" map. An ESM `import` of one
// makes Node's loader run its CommonJS export lexer over the entry file and, file by file, over
// everything it re-exports (all of BullMQ's classes and Lua scripts) just to learn the export
// names, and read a package.json for each: about 0.1 s of CPU per process start. `require`
// loads the very same module instances without that pass; the types still come from `import type`.
import { createRequire } from 'node:module';
import type * as BullMQ from 'bullmq';
import type * as IORedis from 'ioredis';

const require = createRequire(import.meta.url);

/** BullMQ's runtime values (`Queue`, `Worker`, `WaitingError`, …). */
export const bullmq = require('bullmq') as typeof BullMQ;

/** ioredis's runtime values (`Redis`). */
export const ioredis = require('ioredis') as typeof IORedis;
