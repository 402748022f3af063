import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openNdjsonSink } from '../src/ndjson-sink.js';
import { OutputError } from '../src/output-error.js';
import { lockOutput } from '../src/output-lock.js';

const root = mkdtempSync(join(tmpdir(), 'usp-lock-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => {
  const dir = join(root, `d${n++}`);
  spawnSync('mkdir', ['-p', dir]);
  return dir;
};
/** The pid of a process that has ended. */
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid as number;
const lockText = (fields: Record<string, unknown>) =>
  `${JSON.stringify({ since: '2026-01-01T00:00:00.000Z', token: 't', ...fields })}\n`;

describe('lockOutput', () => {
  it('refuses a second holder, naming the first, until it is released', () => {
    const dir = fresh();
    const lock = lockOutput(dir);
    expect(() => lockOutput(dir)).toThrow(
      new RegExp(`being written by another run \\(pid ${process.pid} on ${hostname()} since `),
    );
    lock.release();
    expect(existsSync(join(dir, '.lock'))).toBe(false);
    lockOutput(dir).release();
  });

  it('takes over the lock of a process that is gone, or whose pid another process took since', () => {
    for (const holder of [
      { pid: deadPid(), host: hostname() },
      // Our own pid, with a start time that is not ours: a pid reused after a kill (a container's pid 1).
      { pid: process.pid, host: hostname(), started: 1 },
    ]) {
      const dir = fresh();
      writeFileSync(join(dir, '.lock'), lockText(holder));
      const lock = lockOutput(dir);
      expect(JSON.parse(readFileSync(join(dir, '.lock'), 'utf8')).token).toBe(lock.holder.token);
      lock.release();
    }
  });

  it('never takes over a lock held from another host, and says which file to delete', () => {
    const dir = fresh();
    writeFileSync(join(dir, '.lock'), lockText({ pid: deadPid(), host: 'elsewhere.example' }));
    expect(() => lockOutput(dir)).toThrow(
      /pid \d+ on elsewhere\.example since .*; if that run is gone, delete .*\.lock/,
    );
  });

  it('is taken by openNdjsonSink and given back by close; a refused open changes nothing', async () => {
    const dir = fresh();
    const sink = await openNdjsonSink({ dir });
    const second = await openNdjsonSink({ dir, resume: true }).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(OutputError);
    expect((second as Error).message).toMatch(/being written by another run/);
    await sink.close();
    expect(existsSync(join(dir, '.lock'))).toBe(false);
    await (await openNdjsonSink({ dir, resume: true })).close();
  });
});
