import { flag, integer, list, type OptionSpec, type Parsed } from './args.js';

/**
 * The flags several commands share, each table with the function that reads it, so that a flag
 * means the same thing in every command that takes it. A command's help text stays its own: the
 * same flag is worded for what it does there (one site, or every site of a batch).
 */

/** `-h`, in every command. */
export const HELP_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
} satisfies OptionSpec;

/** `-v` (repeatable: `-vv` is debug) and `-l FILE`: `ls`, `parse`, `validate`. */
export const LOG_OPTIONS = {
  verbose: { type: 'boolean', short: 'v', multiple: true },
  'log-file': { type: 'string', short: 'l' },
} satisfies OptionSpec;

/** How sitemaps are found: `ls`, `batch` and `worker`. */
export const DISCOVERY_OPTIONS = {
  'no-robots': { type: 'boolean', short: 'r' },
  'no-known': { type: 'boolean', short: 'k' },
  'extra-known-path': { type: 'string', multiple: true },
  wp: { type: 'boolean' },
  'sitemap-txt': { type: 'boolean' },
} satisfies OptionSpec;

/** How far one site's walk goes: `ls`, `batch` and `worker`. */
export const WALK_LIMIT_OPTIONS = {
  'max-depth': { type: 'string' },
  'max-sitemaps': { type: 'string' },
  'max-pages': { type: 'string' },
} satisfies OptionSpec;

/** The walk options `DISCOVERY_OPTIONS` set. */
export function discoveryFrom(p: Parsed) {
  return {
    useRobots: !flag(p, 'no-robots'),
    useKnownPaths: !flag(p, 'no-known'),
    extraKnownPaths: list(p, 'extra-known-path'),
    includeWordPressSitemap: flag(p, 'wp'),
    includeSitemapTxt: flag(p, 'sitemap-txt'),
  };
}

/** The walk options `WALK_LIMIT_OPTIONS` and the network's `--concurrency` set. */
export function walkLimitsFrom(p: Parsed, usage: string) {
  return {
    concurrency: integer(p, 'concurrency', usage, 1),
    maxDepth: integer(p, 'max-depth', usage),
    maxSitemaps: integer(p, 'max-sitemaps', usage, 1),
    maxPages: integer(p, 'max-pages', usage, 1),
  };
}

/** `-f FORMAT` (tabtree, pages, json, ndjson, csv) and `-u`: the listing commands `ls`, `parse`, `demo`. */
export const LISTING_OUTPUT_OPTIONS = {
  format: { type: 'string', short: 'f' },
  'strip-url': { type: 'boolean', short: 'u' },
} satisfies OptionSpec;
