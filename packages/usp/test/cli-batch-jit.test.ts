import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runNode, type SiteFarm, startSiteFarm } from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { V8_DEFAULT_INTERRUPT_BUDGET } from '../src/cli/batch-jit.js';
import { CLI, cliEnv } from './cli-helpers.js';

// How much V8's optimising compiler does in a batch process shows only in V8's own trace
// (printed on stdout), so `usp batch` runs in a child with it. The same run with the interrupt
// budget given on the command line (V8's default: a process's own JIT flags are left alone) is
// what the batch would compile without its tuning.

let farm: SiteFarm;
const dir = mkdtempSync(join(tmpdir(), 'usp-batch-jit-'));
const sitesFile = join(dir, 'sites.txt');

beforeAll(async () => {
  farm = await startSiteFarm({ sites: 40, seed: 11, octet: 79, pages: [20, 120] });
  writeFileSync(
    sitesFile,
    farm.sites
      .filter((s) => s.kind !== 'hang')
      .map((s) => s.homepage)
      .join('\n'),
  );
});

afterAll(async () => {
  await farm.close();
  rmSync(dir, { recursive: true, force: true });
});

async function optimisedFunctions(nodeFlags: string[], out: string): Promise<number> {
  const run = await runNode(
    [
      '--trace-opt',
      ...nodeFlags,
      CLI,
      'batch',
      '--out',
      join(dir, out),
      '--allow-private-networks',
      '--timeout',
      '5s',
      '--retries',
      '1',
      sitesFile,
    ],
    { guardMs: 60_000, env: cliEnv() },
  );
  expect(run.code).toBe(0);
  return run.stdout.split('\n').filter((l) => l.startsWith('[completed optimizing')).length;
}

describe('usp batch and V8', () => {
  it('optimises far fewer functions than V8 would by default', async () => {
    const tuned = await optimisedFunctions([], 'tuned');
    const byDefault = await optimisedFunctions(
      [`--interrupt-budget=${V8_DEFAULT_INTERRUPT_BUDGET}`],
      'default',
    );
    expect(byDefault).toBeGreaterThan(0);
    expect(tuned).toBeLessThan(byDefault * 0.75);
  });
});
