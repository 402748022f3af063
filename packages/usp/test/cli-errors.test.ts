import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UspError } from '@usp-ts/core';
import { afterAll, describe, expect, it } from 'vitest';
import { InputFileError, LogFileError, MissingPackageError } from '../src/cli/cli-errors.js';
import { openInput } from '../src/cli/input.js';
import { Log } from '../src/cli/log.js';
import { loadOptionalPackage } from '../src/cli/optional-package.js';

const dir = mkdtempSync(join(tmpdir(), 'usp-cli-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What a call threw (or rejected with). */
async function thrown(f: () => unknown): Promise<unknown> {
  try {
    await f();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

describe('the errors only the command line meets are UspErrors with a code', () => {
  it('an input file that cannot be read: InputFileError, USP_INPUT, the file named, the system error as cause', async () => {
    const missing = join(dir, 'nope.xml');
    const err = await thrown(() => openInput(missing));
    expect(err).toBeInstanceOf(InputFileError);
    expect(err).toBeInstanceOf(UspError);
    expect(err).toMatchObject({
      code: 'USP_INPUT',
      file: missing,
      message: `cannot read ${missing}: no such file`,
    });
    expect(((err as Error).cause as NodeJS.ErrnoException).code).toBe('ENOENT');
    const isDir = await thrown(() => openInput(dir));
    expect(isDir).toMatchObject({ code: 'USP_INPUT', message: `cannot read ${dir}: it is a directory` });
  });

  it('a log file that cannot be opened: LogFileError, USP_OUTPUT', async () => {
    const path = join(dir, 'no-such-dir', 'usp.log');
    const err = await thrown(() => new Log(0, path));
    expect(err).toBeInstanceOf(LogFileError);
    expect(err).toMatchObject({ code: 'USP_OUTPUT', path, message: `cannot open log file ${path}: ENOENT` });
    expect(((err as Error).cause as NodeJS.ErrnoException).code).toBe('ENOENT');
  });

  it('an optional package not installed: MissingPackageError, USP_MISSING_PACKAGE, the package to install', async () => {
    const err = await thrown(() =>
      loadOptionalPackage(
        '@usp-ts/not-installed',
        'usp worker',
        () => import('@usp-ts/not-installed' as string),
      ),
    );
    expect(err).toBeInstanceOf(MissingPackageError);
    expect(err).toMatchObject({ code: 'USP_MISSING_PACKAGE', packageName: '@usp-ts/not-installed' });
    expect(((err as Error).cause as NodeJS.ErrnoException).code).toBe('ERR_MODULE_NOT_FOUND');
  });
});
