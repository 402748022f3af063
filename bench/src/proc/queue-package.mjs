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
