import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { errorText } from '@usp-ts/core';
import { LOCAL_DUMMY_URL } from '../document.js';
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

/** The lines of a file, or of stdin for -. */
export async function* inputLines(source: string): AsyncGenerator<string> {
  const stream = source === '-' ? process.stdin : createReadStream(source);
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    yield* lines;
  } finally {
    lines.close();
    if (source !== '-') stream.destroy();
  }
}

/** Counts the sites of a file (for the ETA), when it is a file and not too large to scan. */
export async function countSites(source: string): Promise<number | null> {
  if (source === '-') return null;
  let n = 0;
  for await (const line of inputLines(source)) {
    const t = line.trim();
    if (t !== '' && !t.startsWith('#')) n++;
  }
  return n;
}

/**
 * `countSites`, or null once stderr says why the file cannot be read (the command then exits 1):
 * the local batch and its queue producer fail the same way.
 */
export async function countSitesOrSay(source: string): Promise<{ readonly total: number | null } | null> {
  try {
    return { total: await countSites(source) };
  } catch (err) {
    process.stderr.write(`usp: error: cannot read ${source}: ${errorText(err)}\n`);
    return null;
  }
}
