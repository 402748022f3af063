import { UspError } from '@usp-ts/core';

// The errors only the command line meets: `runCommandLine` prints their message on one line and
// exits 1. Classes with a stable code, as everywhere else, so a test (or a wrapper running the
// CLI's functions) can tell them apart without matching messages.

/** A file given on the command line (a sitemap, a site list) cannot be read. */
export class InputFileError extends UspError {
  declare readonly code: 'USP_INPUT';
  readonly file: string;
  constructor(file: string, why: string, options?: { cause?: unknown }) {
    super('USP_INPUT', `cannot read ${file}: ${why}`, options);
    this.name = 'InputFileError';
    this.file = file;
  }
}

/** `--log-file` cannot be opened for appending. */
export class LogFileError extends UspError {
  declare readonly code: 'USP_OUTPUT';
  readonly path: string;
  constructor(path: string, options?: { cause?: unknown }) {
    const code = (options?.cause as NodeJS.ErrnoException | undefined)?.code ?? 'error';
    super('USP_OUTPUT', `cannot open log file ${path}: ${code}`, options);
    this.name = 'LogFileError';
    this.path = path;
  }
}

/** A command needs an optional peer package of usp that is not installed. */
export class MissingPackageError extends UspError {
  declare readonly code: 'USP_MISSING_PACKAGE';
  /** The package to install. */
  readonly packageName: string;
  constructor(packageName: string, feature: string, options?: { cause?: unknown }) {
    super(
      'USP_MISSING_PACKAGE',
      `${feature} needs the optional package ${packageName}: npm install ${packageName}`,
      options,
    );
    this.name = 'MissingPackageError';
    this.packageName = packageName;
  }
}
