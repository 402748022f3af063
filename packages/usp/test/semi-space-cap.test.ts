import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { lastJsonLine, runNode } from '@usp-ts/test-server';
import { describe, expect, it } from 'vitest';

// V8's heap sizes are per process: looked at in a child.

/** Tests run what users run: the built package. `pnpm test` (turbo) builds it first. */
const CAP = fileURLToPath(new URL('../dist/cli/semi-space-cap.js', import.meta.url));
if (!existsSync(CAP)) throw new Error(`${CAP} is missing: run \`pnpm --filter usp build\` first`);

// Allocates garbage with a little surviving each scavenge (what makes V8 grow the semi-spaces),
// yielding to the event loop as a walk does; a worker thread starts part-way, as a parse worker
// does, since a new isolate resets the growth factor.
const CHILD = `
import { getHeapSpaceStatistics } from 'node:v8';
import { Worker } from 'node:worker_threads';
const young = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576;
if (process.argv[2] === 'cap') (await import(process.argv[1])).capSemiSpaces(2);
const kept = [];
let garbage = [];
let worker = null;
for (let round = 0; round < 1000 && young() <= 8; round++) {
  for (let i = 0; i < 20_000; i++) {
    garbage.push({ i, s: 'x' + (i % 997) });
    if (garbage.length > 2_000) garbage = [];
    if (i % 500 === 0) kept.push(i);
  }
  if (round === 300) worker = new Worker('setTimeout(() => {}, 10)', { eval: true });
  await new Promise((resolve) => setImmediate(resolve));
}
await worker?.terminate();
process.stdout.write(JSON.stringify({ youngMb: young() }) + '\\n');
`;

async function youngGenerationMb(cap: boolean): Promise<number> {
  const run = await runNode(
    ['--input-type=module', '--eval', CHILD, pathToFileURL(CAP).href, cap ? 'cap' : 'none'],
    { guardMs: 60_000 },
  );
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return (lastJsonLine(run) as { youngMb: number }).youngMb;
}

describe('capSemiSpaces', () => {
  it('keeps the young generation at the cap, also after a worker thread starts', async () => {
    // Without the cap the same allocation grows it past 8 MiB (the loop's end): the test can fail.
    expect(await youngGenerationMb(false)).toBeGreaterThan(8);
    // Two semi-spaces of 2 MiB.
    expect(await youngGenerationMb(true)).toBeLessThanOrEqual(4);
  });
});
