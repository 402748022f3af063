import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Every test of the package, and every CLI it starts, writes its temp files (the page store's
 * `usp-pages-*` directories among them) under one directory of the run, removed at the end: a
 * test worker that vitest ends without running 'exit' hooks leaves nothing in the machine's /tmp.
 */
export function setup(): () => void {
  const previous = process.env.TMPDIR;
  const dir = mkdtempSync(join(tmpdir(), 'usp-test-run-'));
  process.env.TMPDIR = dir;
  return () => {
    rmSync(dir, { recursive: true, force: true });
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
  };
}
