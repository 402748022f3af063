import type { Page, ParsedDocument, Warning } from '@usp-ts/core';
import { type ParseWithOptions, parseWith } from '@usp-ts/testkit';
import { type PlainTextOptions, plainText } from '../src/index.js';

export interface ParseOptions extends Partial<ParseWithOptions> {
  text?: PlainTextOptions;
}

/** Parses one document through core's driver with a registry holding only this format. */
export function parse(
  body: string | Uint8Array | AsyncIterable<Uint8Array>,
  options: ParseOptions = {},
): Promise<ParsedDocument> {
  const { url = 'https://example.com/sitemap.txt', headers, limits } = options;
  return parseWith([plainText(options.text)], body, { url, headers, limits });
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
