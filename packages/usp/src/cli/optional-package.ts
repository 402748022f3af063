import { MissingPackageError } from './cli-errors.js';

/**
 * `usp batch --state`, `usp batch --queue` and `usp worker` need packages that a plain
 * `npm install usp` leaves out on purpose: the SQLite store brings a native module and the queue
 * runner a Redis client, and most users only list or parse. They are optional peers of usp.
 */
export async function loadOptionalPackage<T>(
  pkg: string,
  feature: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (cause) {
    const err = cause as NodeJS.ErrnoException;
    if (err?.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes(`'${pkg}'`)) {
      throw new MissingPackageError(pkg, feature, { cause });
    }
    throw cause;
  }
}
