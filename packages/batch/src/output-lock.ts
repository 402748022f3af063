import { randomUUID } from 'node:crypto';
import { linkSync, openSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { errorText } from '@usp-ts/core';
import { OutputError } from './output-error.js';

/** Who holds an output directory's lock: what `.lock` in it says. */
export interface LockHolder {
  readonly pid: number;
  readonly host: string;
  /** When the holder took the lock (ISO 8601). */
  readonly since: string;
  /**
   * The holder's start time in clock ticks since boot (Linux `/proc/PID/stat`), when known: a pid
   * reused by another process after a kill is not mistaken for the holder.
   */
  readonly started?: number;
  /** Names this holding: a release removes the lock only while it still names this one. */
  readonly token: string;
}

/** A held lock on an output directory (`lockOutput`). */
export interface OutputLock {
  /** The lock file (`DIR/.lock`). */
  readonly path: string;
  readonly holder: LockHolder;
  /** Removes the lock while it is still this one's; calling it again does nothing. */
  release(): void;
}

/** The lock file's name in a directory it guards. */
export const LOCK_FILE = '.lock';

/** Directories this process holds: a lock naming this pid is ours only if listed here. */
const heldHere = new Set<string>();

function startTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22; the command name (field 2) may hold spaces and parentheses, so count after its `)`.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) ? ticks : undefined;
  } catch {
    return undefined;
  }
}

function readHolder(path: string): LockHolder | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const h = JSON.parse(text) as LockHolder;
    if (typeof h.pid === 'number' && typeof h.host === 'string' && typeof h.token === 'string') return h;
  } catch {
    // Not ours: said below as a lock nobody can be named for.
  }
  return { pid: 0, host: '?', since: '?', token: `unreadable:${text.length}` };
}

/**
 * Whether the holder is gone: a process on this host that no longer runs (or whose pid another
 * process took since). A holder on another host (an output on a network share) is never taken
 * for gone: only the user can tell.
 */
function holderGone(h: LockHolder, path: string): boolean {
  if (h.host !== hostname() || h.pid <= 0) return false;
  if (h.pid === process.pid) return !heldHere.has(path);
  try {
    process.kill(h.pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
  const ticks = h.started === undefined ? undefined : startTicks(h.pid);
  return ticks !== undefined && ticks !== h.started;
}

function heldText(dir: string, h: LockHolder, path: string): string {
  if (h.token.startsWith('unreadable:')) {
    return `${dir} has a lock file that names no run (${path}); delete it if no run writes there`;
  }
  const elsewhere = h.host !== hostname() ? `; if that run is gone, delete ${path}` : '';
  return `${dir} is being written by another run (pid ${h.pid} on ${h.host} since ${h.since})${elsewhere}`;
}

/** Creates the lock file whole, or fails with EEXIST: written aside, then hard-linked in. */
function createWhole(path: string, holder: LockHolder): boolean {
  const aside = `${path}.${holder.token}`;
  writeFileSync(aside, `${JSON.stringify(holder)}\n`, { flag: 'wx' });
  try {
    linkSync(aside, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    rmSync(aside, { force: true });
  }
}

/**
 * Takes over the lock of a holder that is gone, under a second lock (`.lock.takeover`) so that two
 * runs starting at once cannot both remove it and each believe they hold the directory.
 */
function takeOver(path: string, gone: LockHolder, holder: LockHolder): boolean {
  const guard = `${path}.takeover`;
  let fd: number;
  try {
    fd = openSync(guard, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // A run killed in the few microseconds it held the guard leaves it: a minute later it is old.
    try {
      if (Date.now() - statSync(guard).mtimeMs > 60_000) rmSync(guard, { force: true });
    } catch {
      // Gone already.
    }
    return false;
  }
  try {
    writeFileSync(fd, `${process.pid}\n`);
    const now = readHolder(path);
    if (now !== null && now.token !== gone.token) return false;
    rmSync(path, { force: true });
    return createWhole(path, holder);
  } finally {
    unlinkSync(guard);
  }
}

/**
 * Locks an output directory for one writer: `DIR/.lock` names the holder (pid, host, since when).
 * A second writer gets an `OutputError` naming the holder at once. A lock left by a run that was
 * killed (its pid gone from this host, or taken by another process since) is taken over; a lock
 * held from another host is never taken over (its message says which file to delete once that run
 * is gone).
 */
export function lockOutput(dir: string): OutputLock {
  const path = join(dir, LOCK_FILE);
  const started = startTicks(process.pid);
  const holder: LockHolder = {
    pid: process.pid,
    host: hostname(),
    since: new Date().toISOString(),
    ...(started !== undefined ? { started } : {}),
    token: randomUUID(),
  };
  try {
    for (let attempt = 0; ; attempt++) {
      if (createWhole(path, holder)) break;
      const other = readHolder(path);
      if (other === null) continue;
      if (!holderGone(other, path) || attempt >= 5) {
        throw new OutputError(heldText(dir, other, path), path);
      }
      if (takeOver(path, other, holder)) break;
      // Another run is taking the same lock over (microseconds): look again a little later.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  } catch (err) {
    if (err instanceof OutputError) throw err;
    throw new OutputError(`cannot lock ${dir}: ${errorText(err)}`, path, { cause: err });
  }
  heldHere.add(path);
  let released = false;
  return {
    path,
    holder,
    release() {
      if (released) return;
      released = true;
      heldHere.delete(path);
      try {
        if (readHolder(path)?.token === holder.token) rmSync(path, { force: true });
      } catch {
        // A lock that cannot be removed is taken over by the next run (its pid is gone by then).
      }
    },
  };
}
