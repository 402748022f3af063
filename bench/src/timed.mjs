// What the batch and queue cases share: a process under GNU time, and an NDJSON file read back.
import { spawn } from 'node:child_process';
import { createReadStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';

/**
 * Spawns a command under GNU time. `done` resolves to wall s, CPU s (user + sys of the process
 * tree), peak RSS MiB, exit code, stderr, and when each stderr line came (s since the start: with
 * `-v`, when each site ended).
 */
export function spawnTimed(cmd, args, { stdout = 'ignore' } = {}) {
  const started = performance.now();
  const child = spawn('/usr/bin/time', ['-f', '@@TIME %e %U %S %M', cmd, ...args], {
    stdio: ['ignore', stdout, 'pipe'],
  });
  let err = '';
  let partial = '';
  const lines = [];
  child.stderr.setEncoding('utf8').on('data', (d) => {
    err += d;
    const at = (performance.now() - started) / 1000;
    const parts = (partial + d).split('\n');
    partial = parts.pop();
    for (const text of parts) lines.push({ at, text });
  });
  const done = new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const m = /@@TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(err);
      if (m === null) return reject(new Error(`no timing (exit ${code}): ${err}`));
      resolve({
        code,
        wallS: Number(m[1]),
        cpuS: Number(m[2]) + Number(m[3]),
        peakRssMiB: Number(m[4]) / 1024,
        stderr: err.replace(/@@TIME.*\n?/, ''),
        lines,
      });
    });
  });
  return { child, done };
}

/**
 * Reads an NDJSON file line by line (a stream: pages.ndjson passes 1 GB at 10,000 sites, more
 * than one string can hold), calling `each(row)`; a missing file is no rows. Resolves with the
 * number of rows.
 */
export async function eachNdjsonRow(path, each) {
  if (!existsSync(path)) return 0;
  let n = 0;
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line === '') continue;
    each(JSON.parse(line));
    n++;
  }
  return n;
}
