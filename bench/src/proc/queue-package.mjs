// The floor scripts' @usp-ts/queue-bullmq (and the ioredis it uses): this checkout's, or the built
// one of another checkout named by USP_FLOOR_ROOT (queue-floor-ir.mjs --compare DIR), for a
// paired A/B.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = process.env.USP_FLOOR_ROOT ?? fileURLToPath(new URL('../../..', import.meta.url));
const require = createRequire(join(root, 'packages/queue-bullmq/package.json'));

export async function queuePackage() {
  const pkg = await import(pathToFileURL(join(root, 'packages/queue-bullmq/dist/index.js')).href);
  return { ...pkg, Redis: require('ioredis').Redis };
}

/**
 * The JIT setting `usp worker` and `usp batch` give themselves (packages/usp/src/cli/batch-jit.ts:
 * V8's default interrupt budget, 67,584, times 4): the floor worker runs with it too, so that its
 * figure is BullMQ's cost as the product pays it (session 12; before, V8's default).
 */
export const PRODUCT_JIT_FLAGS = ['--interrupt-budget=270336'];
