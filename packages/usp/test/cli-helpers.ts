import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The built bin: tests run what users run. `pnpm test` builds first. */
export const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`pnpm --filter usp build\` first`);

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/cli.js ...args` to completion; never rejects for a non-zero exit. */
export function runCli(
  args: string[],
  options: { input?: string | Uint8Array; cwd?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (options.input !== undefined) child.stdin.end(options.input);
    else child.stdin.end();
  });
}

/** Starts the bin and hands back the process, to read its output while it runs. */
export function spawnCli(args: string[]): ChildProcess & { stdout: NodeJS.ReadableStream } {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  return child as ChildProcess & { stdout: NodeJS.ReadableStream };
}
