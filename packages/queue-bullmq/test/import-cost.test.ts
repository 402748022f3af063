import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { lastJsonLine, runNode } from '@usp-ts/test-server';
import { describe, expect, it } from 'vitest';

// What importing the package loads is about a fresh process, so it is looked at in a child, on the
// built package (`pnpm test` builds it first).
const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url));
if (!existsSync(DIST))
  throw new Error(`${DIST} is missing: run \`pnpm --filter @usp-ts/queue-bullmq build\` first`);

describe('importing @usp-ts/queue-bullmq', () => {
  it('loads BullMQ and ioredis through require, not through the ES module loader', async () => {
    // A load hook sees what goes through the ES module loader (Node 20's hooks do not see
    // `require`). A CommonJS file reaching it is lexed for its export names, and so is every file
    // it re-exports: for BullMQ's entry that is all its classes and scripts (~0.9 G instructions).
    const hooks = `export async function load(url, context, next) {
      const r = await next(url, context);
      if (r.format === 'commonjs' && /[\\\\/](bullmq|ioredis)[\\\\/]/.test(url)) process._rawDebug('through the ES module loader: ' + url);
      return r;
    }`;
    const child = `
import { createRequire, register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(process.argv[2]));
const queue = await import(process.argv[1]);
const cache = createRequire(import.meta.url).cache;
const loaded = (name) => Object.keys(cache).some((f) => f.includes('/' + name + '/'));
process.stdout.write(JSON.stringify({ enqueueSites: typeof queue.enqueueSites, bullmq: loaded('bullmq'), ioredis: loaded('ioredis') }) + '\\n');
`;
    const run = await runNode(['--input-type=module', '--eval', child, pathToFileURL(DIST).href, hooks], {
      guardMs: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(lastJsonLine(run)).toEqual({ enqueueSites: 'function', bullmq: true, ioredis: true });
  });
});
