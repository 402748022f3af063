import {
  createRegistry,
  type DocumentLimits,
  headerLookup,
  type ParsedDocument,
  type Plugin,
  parseDocument,
} from '@usp-ts/core';

export interface ParseWithOptions {
  url: string;
  headers?: Readonly<Record<string, string>>;
  limits?: Partial<DocumentLimits>;
}

/** Parses one document through core's driver with a registry holding only `plugins`. */
export function parseWith(
  plugins: readonly Plugin[],
  body: string | Uint8Array | AsyncIterable<Uint8Array>,
  options: ParseWithOptions,
): Promise<ParsedDocument> {
  return parseDocument({
    url: options.url,
    body,
    registry: createRegistry(plugins),
    headers: headerLookup(options.headers),
    limits: options.limits,
  });
}

/** A body delivered in the given pieces (UTF-8), optionally breaking off with an error after them. */
export async function* streamedBody(
  pieces: readonly string[],
  breakOff = false,
): AsyncGenerator<Uint8Array, void, undefined> {
  const enc = new TextEncoder();
  for (const p of pieces) yield enc.encode(p);
  if (breakOff) throw new Error('connection reset');
}
