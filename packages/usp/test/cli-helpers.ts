import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runNode, type SiteFarm } from '@usp-ts/test-server';

/** The built bin: tests run what users run. `pnpm test` builds first. */
export const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`pnpm --filter usp build\` first`);

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a CLI run: the test's own, less any proxy settings the machine has. */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  for (const name of Object.keys(env)) if (/^(https?|no|all)_proxy$/i.test(name)) delete env[name];
  return { ...env, ...extra };
}

/** Runs `node dist/cli.js ...args` to completion; never rejects for a non-zero exit. */
export async function runCli(
  args: string[],
  options: { input?: string | Uint8Array; cwd?: string; env?: Record<string, string> } = {},
): Promise<CliResult> {
  const r = await runNode([CLI, ...args], { ...options, env: cliEnv(options.env) });
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}

/** Starts the bin and hands back the process, to read its output while it runs. */
export function spawnCli(
  args: string[],
  env: Record<string, string> = {},
): ChildProcess & { stdout: NodeJS.ReadableStream } {
  const child = spawn(process.execPath, [CLI, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: cliEnv(env),
  });
  return child as ChildProcess & { stdout: NodeJS.ReadableStream };
}

/** Writes a sites file of `farm`'s homepages, one a line, less its host that never answers. */
export function writeAnsweringSites(file: string, farm: SiteFarm): void {
  writeFileSync(
    file,
    farm.sites
      .filter((s) => s.kind !== 'hang')
      .map((s) => s.homepage)
      .join('\n'),
  );
}
