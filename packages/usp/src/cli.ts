#!/usr/bin/env node

// A closed pipe (`usp ls ... | head`) is not an error: stop quietly.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

const { runCommandLine } = await import('./cli/dispatch.js');
const code = await runCommandLine(process.argv.slice(2), (onSignal) => {
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
});
// Nothing is left to stop cleanly, but a signal's default action would skip the 'exit' hooks
// that remove the page store's temp files: exit through them, with the shell's code.
process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));
process.exitCode = code;
// Everything is closed by now; should a stray handle linger, do not hang the shell.
setTimeout(() => process.exit(), 2000).unref();
