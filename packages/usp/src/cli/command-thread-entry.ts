// The thread's side of command-thread.ts: runs one command line as the process would.
import { parentPort, workerData } from 'node:worker_threads';
import type { CommandThreadData, TerminalState, ToCommandThread } from './command-thread.js';
import { runCommandLine } from './dispatch.js';

const data = workerData as CommandThreadData;
const port = parentPort;
if (port === null) throw new Error('command-thread-entry runs in a worker thread');

// The thread's stdout and stderr are pipes to the process's: they say what the process's streams
// are, so that the progress line, its width and the escaping of control characters stay the same.
const mirror = (stream: NodeJS.WriteStream, state: TerminalState): void => {
  if (state.isTTY) stream.isTTY = true;
  if (state.columns !== undefined) stream.columns = state.columns;
};
mirror(process.stdout, data.stdout);
mirror(process.stderr, data.stderr);

let onSignal: ((signal: 'SIGINT' | 'SIGTERM') => void) | null = null;
port.on('message', (m: ToCommandThread) => {
  if ('signal' in m) onSignal?.(m.signal);
  else process[m.stream].columns = m.columns;
});
// Listening must not keep the thread alive once the command is done.
port.unref();

process.exitCode = await runCommandLine([...data.argv], (listener) => {
  onSignal = listener;
  return () => {
    onSignal = null;
  };
});
// Everything is closed by now; should a stray handle linger, do not hang the shell.
setTimeout(() => process.exit(), 2000).unref();
