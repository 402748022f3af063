// Preloaded (`node --import`) into a `usp worker` by cli-worker.test.ts: the worker kills itself
// with SIGKILL right after writing the journal line of its first site (of its Nth with
// USP_KILL_AFTER_SITES=N), so the site's lines are
// complete in its files but BullMQ never hears that the job is done: the window in which a site
// gets a second copy (another worker takes the stalled job over and walks it again).
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

const killAfter = Number(process.env.USP_KILL_AFTER_SITES ?? 1);
let sites = 0;
const writeSync = fs.writeSync;
fs.writeSync = function killAfterJournalLine(fd, data, ...rest) {
  const written = writeSync.call(this, fd, data, ...rest);
  // The sink writes its journal lines as bytes (it checks that each write took all of them).
  const head =
    typeof data === 'string'
      ? data
      : ArrayBuffer.isView(data)
        ? Buffer.from(data.buffer, data.byteOffset, Math.min(14, data.byteLength)).toString()
        : '';
  if (head.startsWith('{"type":"site"') && ++sites >= killAfter) process.kill(process.pid, 'SIGKILL');
  return written;
};
// The ES module bindings of node:fs (what the sink imports) follow the patched function.
syncBuiltinESMExports();
