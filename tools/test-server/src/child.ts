import { spawn } from 'node:child_process';

export interface NodeRun {
  /** The exit code; `null` when a signal ended the child. */
  code: number | null;
  /** The guard had to kill the child: it would have run on. */
  hung: boolean;
  stdout: string;
  stderr: string;
}

export interface NodeRunOptions {
  /** Kills the child (SIGKILL) after this many milliseconds and reports it as hung. Default: never. */
  guardMs?: number;
  /** Written to the child's stdin, which is then closed (closed at once without it). */
  input?: string | Uint8Array;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * Runs `node ...args` in a child process to its end and collects its output. Never rejects for
 * how the child ended: tests assert on the code, and a process that must exit on its own (no
 * handle left behind) is told from one that hangs by the guard.
 */
export function runNode(args: readonly string[], options: NodeRunOptions = {}): Promise<NodeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    let hung = false;
    const guard =
      options.guardMs === undefined
        ? null
        : setTimeout(() => {
            hung = true;
            child.kill('SIGKILL');
          }, options.guardMs);
    child.on('error', reject);
    child.on('close', (code) => {
      if (guard !== null) clearTimeout(guard);
      resolve({ code, hung, stdout, stderr });
    });
    if (options.input !== undefined) child.stdin.end(options.input);
    else child.stdin.end();
  });
}

/**
 * The last JSON object the child wrote to stdout as a line of its own (how a test's child script
 * reports); `null` when it wrote none. Other lines after it are passed over: V8's `--trace-*`
 * lines, which Node 24's compiler threads may print after the script's last line.
 */
export function lastJsonLine(run: NodeRun): Record<string, unknown> | null {
  const lines = run.stdout.trim().split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] as string;
    if (line.startsWith('{')) return JSON.parse(line) as Record<string, unknown>;
  }
  return null;
}
