import { open } from 'node:fs/promises';
import { LOCAL_DUMMY_URL } from '../api/document.js';
import { InputFileError } from './cli-errors.js';

/** Opens a file for streaming, turning the usual failures into one clear message. */
export async function openInput(file: string): Promise<AsyncIterable<Uint8Array>> {
  if (file === '-') return process.stdin;
  try {
    const handle = await open(file, 'r');
    if ((await handle.stat()).isDirectory()) {
      await handle.close();
      throw new InputFileError(file, 'it is a directory');
    }
    return handle.createReadStream();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new InputFileError(file, 'no such file', { cause: err });
    if (code === 'EACCES') throw new InputFileError(file, 'permission denied', { cause: err });
    throw err;
  }
}

/** How a command's messages name things. */
export type Namer = (text: string) => string;

/**
 * Replaces usp's dummy URL, the base a file's relative links resolve against, by the name of
 * the file the user gave (`<stdin>` for -), so that messages say what the user knows.
 */
export function inputNamer(file: string): Namer {
  const name = file === '-' ? '<stdin>' : file;
  return (text) => (text.includes(LOCAL_DUMMY_URL) ? text.split(LOCAL_DUMMY_URL).join(name) : text);
}
