import {
  createRegistry,
  type DocumentLimits,
  headerLookup,
  type ParsedDocument,
  parseDocument,
  type RobotsRules,
  type Warning,
} from '@usp-ts/core';
import { type RobotsTxtOptions, robotsTxt } from '../src/index.js';

export interface ParseOptions {
  url?: string;
  headers?: Record<string, string>;
  robots?: RobotsTxtOptions;
  limits?: Partial<DocumentLimits>;
}

/** Parses one document through core's driver with a registry holding only this format. */
export function parse(
  body: string | Uint8Array | AsyncIterable<Uint8Array>,
  options: ParseOptions = {},
): Promise<ParsedDocument> {
  return parseDocument({
    url: options.url ?? 'https://example.com/robots.txt',
    body,
    registry: createRegistry([robotsTxt(options.robots)]),
    headers: headerLookup(options.headers),
    limits: options.limits,
  });
}

export interface Parsed {
  type: string;
  children: string[];
  robots: RobotsRules | null;
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
  const robots = doc.sitemap.type === 'IndexRobotsTxtSitemap' ? doc.sitemap.robots : null;
  return {
    type: doc.sitemap.type,
    children: doc.children.map((c) => c.url),
    robots,
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
