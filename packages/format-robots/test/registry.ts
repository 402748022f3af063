import type { ParsedDocument, RobotsRules, Warning } from '@usp-ts/core';
import { type ParseWithOptions, parseWith } from '@usp-ts/testkit';
import { type RobotsTxtOptions, robotsTxt } from '../src/index.js';

export interface ParseOptions extends Partial<ParseWithOptions> {
  robots?: RobotsTxtOptions;
}

/** Parses one document through core's driver with a registry holding only this format. */
export function parse(
  body: string | Uint8Array | AsyncIterable<Uint8Array>,
  options: ParseOptions = {},
): Promise<ParsedDocument> {
  const { url = 'https://example.com/robots.txt', headers, limits } = options;
  return parseWith([robotsTxt(options.robots)], body, { url, headers, limits });
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
