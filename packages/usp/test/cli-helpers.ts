import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runNode } from '@usp-ts/test-server';

/** The built bin: tests run what users run. `pnpm test` builds first. */
export const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`pnpm --filter usp build\` first`);

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/cli.js ...args` to completion; never rejects for a non-zero exit. */
export async function runCli(
  args: string[],
  options: { input?: string | Uint8Array; cwd?: string } = {},
): Promise<CliResult> {
  const r = await runNode([CLI, ...args], { ...options, env: { ...process.env, NO_COLOR: '1' } });
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}

/** Starts the bin and hands back the process, to read its output while it runs. */
export function spawnCli(args: string[]): ChildProcess & { stdout: NodeJS.ReadableStream } {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  return child as ChildProcess & { stdout: NodeJS.ReadableStream };
}
