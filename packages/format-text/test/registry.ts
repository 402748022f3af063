import {
  createRegistry,
  type DocumentLimits,
  headerLookup,
  type Page,
  type ParsedDocument,
  parseDocument,
  type Warning,
} from '@usp-ts/core';
import { type PlainTextOptions, plainText } from '../src/index.js';

export interface ParseOptions {
  url?: string;
  headers?: Record<string, string>;
  text?: PlainTextOptions;
  limits?: Partial<DocumentLimits>;
}

/** Parses one document through core's driver with a registry holding only this format. */
export function parse(
  body: string | Uint8Array | AsyncIterable<Uint8Array>,
  options: ParseOptions = {},
): Promise<ParsedDocument> {
  return parseDocument({
    url: options.url ?? 'https://example.com/sitemap.txt',
    body,
    registry: createRegistry([plainText(options.text)]),
    headers: headerLookup(options.headers),
    limits: options.limits,
  });
}

export interface Parsed {
  type: string;
  pages: Page[];
  urls: string[];
  warnings: Warning[];
  codes: string[];
  truncated: boolean;
}

/** `parse`, flattened for assertions. */
export async function run(
  body: string | Uint8Array | AsyncIterable<Uint8Array>,
  options: ParseOptions = {},
): Promise<Parsed> {
  const doc = await parse(body, options);
  const pages = [...doc.sitemap.allPages()];
  return {
    type: doc.sitemap.type,
    pages,
    urls: pages.map((p) => p.url),
    warnings: doc.warnings,
    codes: doc.warnings.map((w) => w.code),
    truncated: doc.truncated,
  };
}

/** A body delivered in the given pieces (UTF-8), optionally breaking off with an error after them. */
export async function* chunks(
  pieces: string[],
  breakOff = false,
): AsyncGenerator<Uint8Array, void, undefined> {
  const enc = new TextEncoder();
  for (const p of pieces) yield enc.encode(p);
  if (breakOff) throw new Error('connection reset');
}
