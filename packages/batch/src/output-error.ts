import { UspError } from '@usp-ts/core';

/** The batch's output directory cannot be used (code `USP_OUTPUT`); nothing in it is deleted. */
export class OutputError extends UspError {
  readonly path: string;
  constructor(message: string, path: string, options?: { cause?: unknown }) {
    super('USP_OUTPUT', message, options);
    this.name = 'OutputError';
    this.path = path;
  }
}
