import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, cliEnv, runCli } from './cli-helpers.js';

// A --state where the run may not write. Root ignores permission bits, so as root the CLI runs as
// nobody (uid 65534); the directory is under /tmp, not the test run's private TMPDIR, so that
// nobody can reach it.
const asRoot = process.getuid?.() === 0;
const dir = mkdtempSync('/tmp/usp-state-ro-');
chmodSync(dir, 0o755);
afterAll(() => {
  chmodSync(dir, 0o755);
  for (const d of ['ro', 'ro-file']) chmodSync(join(dir, d), 0o755);
  rmSync(dir, { recursive: true, force: true });
});

async function batchAsUser(args: string[]): Promise<{ code: number | null; stderr: string }> {
  if (!asRoot) return runCli(args);
  const child = spawn(process.execPath, [CLI, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: cliEnv({ TMPDIR: '/tmp' }),
    uid: 65534,
    gid: 65534,
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stderr };
}

describe('usp batch --state where it cannot write', () => {
  it('says read-only / permission denied with the path, in one line, for a new state in a read-only directory and an existing read-only state', async () => {
    const sites = join(dir, 'sites.txt');
    writeFileSync(sites, 'http://127.0.0.1:9/\n');
    chmodSync(sites, 0o644);
    const roDir = join(dir, 'ro');
    mkdirSync(roDir);
    chmodSync(roDir, 0o555);
    const fresh = await batchAsUser([
      'batch',
      '--out',
      join(dir, 'out1'),
      '--state',
      join(roDir, 's.sqlite'),
      sites,
    ]);
    expect(fresh.code).toBe(1);
    expect(fresh.stderr.trim().split('\n')).toHaveLength(1);
    expect(fresh.stderr).toContain(
      `usp: error: state file ${join(roDir, 's.sqlite')} cannot be written: its directory ${roDir} is read-only (permission denied)`,
    );

    // An existing state, made by a run that could write it, then made read-only with its directory.
    const roFile = join(dir, 'ro-file');
    mkdirSync(roFile);
    const state = join(roFile, 's.sqlite');
    const made = await runCli(['batch', '--out', join(dir, 'out2'), '--state', state, sites]);
    expect(made.code, made.stderr).toBe(0);
    chmodSync(state, 0o444);
    chmodSync(roFile, 0o555);
    const again = await batchAsUser(['batch', '--out', join(dir, 'out3'), '--state', state, sites]);
    expect(again.code).toBe(1);
    expect(again.stderr.trim().split('\n')).toHaveLength(1);
    expect(again.stderr).toContain(
      `usp: error: state file ${state} cannot be written: ${state} is read-only (permission denied)`,
    );
  });
});
