import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * `mkdir -p` that gives up. Node's own recursive mkdir spins for ever when a parent exists but
 * cannot hold the child (procfs answers ENOENT for any new name, so does a dangling symlink):
 * here each level is tried at most twice, and the child's error is thrown.
 */
export function makeDirectory(dir: string): void {
  try {
    mkdirSync(dir);
    return;
  } catch (err) {
    if (isExistingDirectory(err, dir)) return;
    const parent = dirname(dir);
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || parent === dir) throw err;
  }
  makeDirectory(dirname(dir));
  try {
    mkdirSync(dir);
  } catch (err) {
    if (!isExistingDirectory(err, dir)) throw err;
  }
}

function isExistingDirectory(err: unknown, dir: string): boolean {
  if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return false;
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
