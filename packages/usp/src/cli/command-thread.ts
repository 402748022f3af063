// The process's side of a command run in a worker thread: this thread only starts it and relays
// what only a process has (signals, stdin, the terminal); the command's own code, its output
// and its exit status come from the thread, as if it ran here.
import { Worker } from 'node:worker_threads';

/**
 * The thread's young generation, MiB (V8 splits it into two semi-spaces and a large-object space:
 * 10 gives 4 MiB semi-spaces). `usp batch` allocates a lot of short-lived objects while most of
 * what it keeps is spilled to files; V8 grows the semi-spaces of a main thread to 16 MiB each,
 * and they stay committed. Node 20 cannot set `--max-semi-space-size` for its own main thread
 * once started, and re-spawning a process would leave a child that outlives a `kill -9` of its
 * parent and races `--resume`: a thread dies with the process. Measured on the bench's 1,000
 * sites (`--sites 16`), quiet machine, one run each: main thread 218.5 MiB peak (session 7);
 * 6 MiB (2 MiB semi-spaces) 182.8 MiB but 17.2 s CPU for the fresh run and 2.84 s for the
 * no-change run (scavenges); 10 MiB 182.1 MiB, 14.5 s, 2.44 s; 16 MiB 197.1 MiB, 13.3 s, 2.43 s.
 */
export const THREAD_YOUNG_GENERATION_MB = 10;

/** What the process tells its command's thread. */
export type ToCommandThread =
  | { readonly signal: 'SIGINT' | 'SIGTERM' }
  | { readonly stream: 'stdout' | 'stderr'; readonly columns: number };

/** What a stream of the process is: the thread's own stdout and stderr are pipes to this thread. */
export interface TerminalState {
  readonly isTTY: boolean;
  readonly columns: number | undefined;
}

export interface CommandThreadData {
  readonly argv: readonly string[];
  readonly stdout: TerminalState;
  readonly stderr: TerminalState;
}

const terminalState = (s: NodeJS.WriteStream): TerminalState => ({
  isTTY: s.isTTY === true,
  columns: s.columns,
});

/**
 * Runs the command line `argv` in a worker thread with a small young generation. The process
 * exits with the thread's status. The first SIGINT/SIGTERM is handed to the command (which stops
 * cleanly); a second one, or one after the command ended, exits at once with the shell's code.
 */
export function runInThread(argv: readonly string[]): void {
  // Only a command that reads stdin ("-" as the file) gets it: a piped stdin would otherwise
  // keep this thread waiting for its end.
  const readsStdin = argv.includes('-');
  const data: CommandThreadData = {
    argv,
    stdout: terminalState(process.stdout),
    stderr: terminalState(process.stderr),
  };
  const worker = new Worker(new URL('./command-thread-entry.js', import.meta.url), {
    workerData: data,
    stdin: readsStdin,
    resourceLimits: { maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB },
    name: `usp ${argv[0] ?? ''}`,
  });
  const send = (message: ToCommandThread): void => worker.postMessage(message);
  if (readsStdin && worker.stdin !== null) process.stdin.pipe(worker.stdin);

  let running = true;
  let signalled = false;
  const onSignal = (signal: 'SIGINT' | 'SIGTERM'): void => {
    if (!running || signalled) process.exit(signal === 'SIGTERM' ? 143 : 130);
    signalled = true;
    send({ signal });
  };
  const resized = (stream: 'stdout' | 'stderr') => () => send({ stream, columns: process[stream].columns });
  const onStdoutResize = resized('stdout');
  const onStderrResize = resized('stderr');
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  if (data.stdout.isTTY) process.stdout.on('resize', onStdoutResize);
  if (data.stderr.isTTY) process.stderr.on('resize', onStderrResize);

  worker.on('error', (err: unknown) => {
    // An exception the command did not catch: the thread is gone.
    process.stderr.write(`usp: error: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}\n`);
    process.exitCode = 1;
  });
  worker.on('exit', (code) => {
    running = false;
    process.stdout.off('resize', onStdoutResize);
    process.stderr.off('resize', onStderrResize);
    if (readsStdin) {
      process.stdin.unpipe();
      process.stdin.destroy();
    }
    if (process.exitCode === undefined || process.exitCode === 0) process.exitCode = code;
  });
}
