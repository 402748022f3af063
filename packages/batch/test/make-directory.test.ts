import { existsSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeDirectory } from '../src/make-directory.js';
import { openNdjsonSink } from '../src/ndjson-sink.js';
import { OutputError } from '../src/output-error.js';

const root = mkdtempSync(join(tmpdir(), 'usp-mkdir-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('makeDirectory', () => {
  it('makes every missing level, and an existing directory is fine', () => {
    const dir = join(root, 'a', 'b', 'c');
    makeDirectory(dir);
    expect(statSync(dir).isDirectory()).toBe(true);
    makeDirectory(dir);
    makeDirectory(join(root, 'a'));
  });

  it('throws when a file is in the way', () => {
    writeFileSync(join(root, 'file'), '');
    expect(() => makeDirectory(join(root, 'file'))).toThrow(/EEXIST/);
    expect(() => makeDirectory(join(root, 'file', 'sub'))).toThrow(/ENOTDIR/);
  });

  it('throws under a dangling symlink (naming the link) instead of trying again for ever', () => {
    symlinkSync(join(root, 'nowhere'), join(root, 'dangling'));
    expect(() => makeDirectory(join(root, 'dangling', 'out'))).toThrow(/EEXIST.*dangling'/);
    expect(existsSync(join(root, 'nowhere'))).toBe(false);
  });

  // procfs answers ENOENT for any new name although the parent exists: Node's own recursive
  // mkdir spins there for ever (the batch hung with `--out /proc/…` before makeDirectory).
  it.skipIf(!existsSync('/proc/self'))('throws ENOENT under /proc (skipped where there is no procfs)', () => {
    expect(() => makeDirectory('/proc/usp-test-no-such-dir/out')).toThrow(/ENOENT/);
  });

  it.skipIf(!existsSync('/proc/self'))(
    'an output directory under /proc is an OutputError, not a hang (skipped where there is no procfs)',
    async () => {
      const err = await openNdjsonSink({ dir: '/proc/usp-test-no-such-dir/out' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OutputError);
      expect((err as OutputError).code).toBe('USP_OUTPUT');
      expect((err as Error).message).toMatch(
        /cannot create the output directory \/proc\/usp-test-no-such-dir\/out: .*ENOENT/,
      );
    },
  );
});
