import { open } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { countSiteLines } from '@usp-ts/batch';
import { errorText } from '@usp-ts/core';

/** Bytes read from a sites file at a time. */
const CHUNK_BYTES = 64 * 1024;

/** Where `readline` (which this replaces) breaks lines. */
const LINE_BREAK = /\r\n|\n|\r/;
const HAS_BREAK = /[\r\n]/;

/** A file's bytes, or stdin's for -; the file is closed when the reader stops. */
async function* chunksOf(source: string): AsyncGenerator<Uint8Array> {
  if (source === '-') {
    yield* process.stdin.iterator({ destroyOnReturn: false });
    return;
  }
  const handle = await open(source, 'r');
  try {
    // One buffer, reused: the caller has decoded a chunk before it asks for the next.
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null);
      if (bytesRead === 0) return;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/**
 * The lines of a file, or of stdin for -, as `readline` gives them (breaks at \n, \r\n and \r;
 * UTF-8), without `readline` and file streams: loading and running those was ~35 M instructions
 * (~15 ms) of `usp batch`'s start, paid twice (the count, then the walk).
 */
export async function* inputLines(source: string): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  // The unfinished last line, in pieces: a line longer than a read grows by appending, not by
  // joining and splitting it again at every read (quadratic in the line's length).
  let partial: string[] = [];
  for await (const chunk of chunksOf(source)) {
    const piece = decoder.write(chunk as Buffer);
    if (!HAS_BREAK.test(piece)) {
      partial.push(piece);
      continue;
    }
    const text = partial.join('') + piece;
    // A \r at the end may be the first half of a \r\n: it waits for the next chunk.
    const end = text.endsWith('\r') ? text.length - 1 : text.length;
    const lines = text.slice(0, end).split(LINE_BREAK);
    partial = [(lines.pop() as string) + text.slice(end)];
    yield* lines;
  }
  const lines = (partial.join('') + decoder.end()).split(LINE_BREAK);
  if (lines[lines.length - 1] === '') lines.pop();
  yield* lines;
}

/**
 * Counts the sites of a file as the run will (`countSiteLines`: each site once, and each line that
 * is not a site URL), so that the progress line ends at its total; `null` for stdin, which can be
 * read only once.
 */
export async function countSites(source: string): Promise<number | null> {
  if (source === '-') return null;
  return countSiteLines(inputLines(source));
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
