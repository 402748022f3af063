import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runNode, type SiteFarm, startSiteFarm } from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_SEMI_SPACE_MB } from '../src/cli/batch.js';
import { V8_DEFAULT_INTERRUPT_BUDGET } from '../src/cli/batch-jit.js';
import { TUNES_JIT_OF_THIS_V8, TUNES_THIS_V8 } from '../src/cli/v8-flags.js';
import { CLI, cliEnv, writeAnsweringSites } from './cli-helpers.js';

// How much V8's optimising compiler does in a batch process shows only in V8's own trace
// (printed on stdout), so `usp batch` runs in a child with it. The same run with the interrupt
// budget given on the command line (V8's default: a process's own JIT flags are left alone) is
// what the batch would compile without its tuning. Where the batch runs (a worker thread is a
// second start-up of Node, paid before the first request), how large its young generation gets
// and whether Node compiles its built-in modules from the code cache (V8 flags set too early make
// it compile them from source) are seen from inside the child, through a module given to --import.

let farm: SiteFarm;
const dir = mkdtempSync(join(tmpdir(), 'usp-batch-jit-'));
const sitesFile = join(dir, 'sites.txt');
const probe = join(dir, 'probe.mjs');

beforeAll(async () => {
  farm = await startSiteFarm({ sites: 40, seed: 11, octet: 79, pages: [20, 120] });
  writeAnsweringSites(sitesFile, farm);
  writeFileSync(
    probe,
    `import { getHeapSpaceStatistics } from 'node:v8';
import { isMainThread } from 'node:worker_threads';
if (isMainThread) {
  let workers = 0;
  process.on('worker', () => workers++);
  process.on('exit', () => {
    const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
    process.stderr.write('@@probe ' + JSON.stringify({ workers, youngMb: young / 1048576 }) + '\\n');
  });
}
`,
  );
});

afterAll(async () => {
  await farm.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `usp batch` over the farm's sites in a child given `nodeFlags`, into `dir/out`. */
async function batchRun(
  nodeFlags: string[],
  out: string,
  extra: string[] = [],
  env: Record<string, string> = {},
) {
  const run = await runNode(
    [
      ...nodeFlags,
      CLI,
      'batch',
      '--out',
      join(dir, out),
      ...extra,
      '--allow-private-networks',
      '--timeout',
      '5s',
      '--retries',
      '1',
      sitesFile,
    ],
    { guardMs: 60_000, env: cliEnv(env) },
  );
  expect(run.code, run.stderr).toBe(0);
  return run;
}

async function optimisedFunctions(nodeFlags: string[], out: string): Promise<number> {
  const run = await batchRun(['--trace-opt', ...nodeFlags], out);
  return run.stdout.split('\n').filter((l) => l.startsWith('[completed optimizing')).length;
}

describe('usp batch and V8', () => {
  it.skipIf(!TUNES_JIT_OF_THIS_V8)(
    'optimises far fewer functions than V8 would by default (skipped on V8 12+, Node 22 and 24: V8 12 has no --interrupt-budget, and the CLI leaves a JIT it has not measured alone)',
    async () => {
      const tuned = await optimisedFunctions([], 'tuned');
      const byDefault = await optimisedFunctions(
        [`--interrupt-budget=${V8_DEFAULT_INTERRUPT_BUDGET}`],
        'default',
      );
      expect(byDefault).toBeGreaterThan(0);
      expect(tuned).toBeLessThan(byDefault * 0.75);
    },
  );

  it('detaches an ArrayBuffer before its walk is optimised, so that a later detach (undici WebAssembly memory growing) throws no optimised code away', async () => {
    const run = await batchRun(['--trace-opt', '--trace-protector-invalidation'], 'detach');
    const lines = run.stdout.split('\n');
    const invalidated = lines.findIndex((l) => /Invalidating protector cell ArrayBufferDetaching/.test(l));
    expect(invalidated).toBeGreaterThanOrEqual(0);
    // Only Node's start-up (paths, URLs, module loading) is optimised before it, and none of that
    // code relied on no buffer ever being detached: nothing is marked for deoptimisation by it.
    expect(lines[invalidated + 1] ?? '').not.toMatch(/marking dependent code/);
    expect(lines.slice(0, invalidated).join('\n')).not.toMatch(/JSFunction (#scan|fetchOne|append) /);
    expect(
      lines.slice(invalidated).filter((l) => l.startsWith('[completed optimizing')).length,
    ).toBeGreaterThan(0);
  });

  it.skipIf(!TUNES_THIS_V8)(
    'walks on the main thread, its young generation capped, every built-in module from the code cache (skipped on V8 13+, Node 24: the CLI leaves a V8 it has not measured alone)',
    async () => {
      const run = await batchRun(['--import', probe], 'start', ['--state', join(dir, 'state.sqlite')], {
        NODE_DEBUG_NATIVE: 'CODE_CACHE',
      });
      expect(run.stderr).toMatch(/usp batch: 39 sites/);
      const seen = JSON.parse(/@@probe (.*)/.exec(run.stderr)?.[1] ?? 'null');
      // Two semi-spaces of BATCH_SEMI_SPACE_MB, not V8's 16 MiB each for a main thread.
      expect(seen).toEqual({ workers: 0, youngMb: 2 * BATCH_SEMI_SPACE_MB });
      // Node says which built-in modules it compiled, and whether from its code cache.
      expect(run.stderr).toMatch(/Code cache of \S+ \(\w+\) is accepted/);
      expect(run.stderr.split('\n').filter((l) => /is rejected/.test(l))).toEqual([]);
    },
  );

  it.skipIf(!TUNES_THIS_V8)(
    'scavenges on the main thread alone once the walk starts, and leaves a process given --parallel-scavenge as it is (skipped on V8 13+, Node 24)',
    async () => {
      // V8 prints a line per scavenger task (--trace-parallel-scavenge), then the scavenge's own
      // line (--trace-gc): tasks of each scavenge, in order. The last ones are the walk's.
      const tasksPerScavenge = async (nodeFlags: string[], out: string): Promise<number[]> => {
        const run = await batchRun(['--trace-gc', '--trace-parallel-scavenge', ...nodeFlags], out);
        const counts: number[] = [];
        let tasks = 0;
        for (const line of run.stdout.split('\n')) {
          if (/ scavenge\[0x[0-9a-f]+\]: /.test(line)) tasks++;
          else if (/ Scavenge /.test(line)) {
            counts.push(tasks);
            tasks = 0;
          }
        }
        return counts;
      };
      const tuned = await tasksPerScavenge([], 'one-task');
      const given = await tasksPerScavenge(['--parallel-scavenge'], 'parallel');
      // The walk's scavenges are the last three (8 MiB semi-spaces: a few for this farm).
      expect(tuned.length).toBeGreaterThanOrEqual(3);
      expect(tuned.slice(-3)).toEqual([1, 1, 1]);
      expect(Math.max(...given.slice(-3))).toBeGreaterThan(1);
    },
  );
});
