import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { lastJsonLine, runNode } from '@usp-ts/test-server';
import { describe, expect, it } from 'vitest';

// External memory and collections are per process: looked at in a child, with the built package.
const GC = fileURLToPath(new URL('../dist/node/external-memory-gc.js', import.meta.url));
if (!existsSync(GC)) throw new Error(`${GC} is missing: run \`pnpm --filter usp build\` first`);

// Buffers of 64 KiB kept for a while (long enough to be promoted, as chunks waiting their turn
// in a walk are), then dropped: 100 MiB over the run, at most ~4 MiB alive at a time. A check
// every 2 ms, configured short; the loop yields to timers each round.
const CHILD = `
import { getHeapStatistics } from 'node:v8';
const externalMb = () => getHeapStatistics().external_memory / 1048576;
if (process.argv[2] === 'on') (await import(process.argv[1])).collectOnExternalGrowth(8, 2);
let kept = [];
let garbage = [];
let peakMb = 0;
for (let round = 0; round < 400; round++) {
  for (let i = 0; i < 4; i++) kept.push(Buffer.alloc(65_536));
  for (let i = 0; i < 20_000; i++) {
    garbage.push({ i });
    if (garbage.length > 2_000) garbage = [];
  }
  if (kept.length > 64) kept = kept.slice(-8);
  peakMb = Math.max(peakMb, externalMb());
  await new Promise((resolve) => setTimeout(resolve, 1));
}
process.stdout.write(JSON.stringify({ peakMb }) + '\\n');
`;

async function peakExternalMb(on: boolean): Promise<number> {
  const run = await runNode(
    ['--input-type=module', '--eval', CHILD, pathToFileURL(GC).href, on ? 'on' : 'off'],
    {
      guardMs: 60_000,
    },
  );
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return (lastJsonLine(run) as { peakMb: number }).peakMb;
}

describe('collectOnExternalGrowth', () => {
  it('keeps spent Buffers from piling up past the step', async () => {
    // Without it V8 lets them reach tens of MiB (its own trigger is 64 MiB above the last level).
    expect(await peakExternalMb(false)).toBeGreaterThan(40);
    // The step (8) above the lowest level (~2), the ~4 MiB alive and a round or two between checks:
    // ~14 measured.
    expect(await peakExternalMb(true)).toBeLessThan(20);
  });
});
