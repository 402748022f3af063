import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runNode } from '@usp-ts/test-server';
import { describe, expect, it } from 'vitest';
import { groupDigits } from '../src/cli/digits.js';

const LS = fileURLToPath(new URL('../dist/cli/ls.js', import.meta.url));
if (!existsSync(LS)) throw new Error(`${LS} is missing: run \`pnpm --filter usp build\` first`);

describe('groupDigits', () => {
  it('writes integers as en-US does', () => {
    for (const n of [
      0, 7, 999, 1000, 10_000, 65_536, 999_999, 1_000_000, 1_234_567_890, -1, -1234, -999_999,
    ]) {
      expect(groupDigits(n)).toBe(n.toLocaleString('en-US'));
    }
  });

  it('leaves what is not a safe integer to en-US formatting', () => {
    expect(groupDigits(1234.5)).toBe('1,234.5');
  });

  it('keeps number formatting out of the ls command: its help text is built at import', async () => {
    // ICU's locale table, built on a process's first toLocaleString, is ~25 ms of every `usp ls`.
    const child = `Number.prototype.toLocaleString = () => { throw new Error('toLocaleString at import'); };
await import(process.argv[1]);
process.stdout.write('imported\\n');`;
    const run = await runNode(['--input-type=module', '--eval', child, pathToFileURL(LS).href], {
      guardMs: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('imported\n');
  });
});
