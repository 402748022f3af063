import { DEFAULT_PER_HOST, DEFAULT_SITES, normalizeSite, type SiteRunOptions } from '@usp-ts/batch';
import type { WebResponse } from '@usp-ts/core';
import { createWebClient, type WebClientOptions } from '@usp-ts/fetcher';
import { nodeGunzip } from '../node/gunzip.js';
import { duration, integer, type OptionSpec, type Parsed, str } from './args.js';
import {
  DISCOVERY_OPTIONS,
  discoveryFrom,
  HELP_OPTIONS,
  WALK_LIMIT_OPTIONS,
  walkLimitsFrom,
} from './flags.js';
import { NETWORK_OPTIONS, webClientOptionsFrom } from './network.js';
import { PLUGIN_OPTIONS } from './plugin-flags.js';

/** How every site of a run is walked and written: the flags `usp batch` and `usp worker` share. */
export const SITE_WALK_OPTIONS = {
  ...HELP_OPTIONS,
  out: { type: 'string', short: 'o' },
  gzip: { type: 'boolean' },
  state: { type: 'string' },
  'full-every': { type: 'string' },
  sites: { type: 'string' },
  'per-host': { type: 'string' },
  'max-crawl-delay': { type: 'string' },
  'site-deadline': { type: 'string' },
  'probe-timeout': { type: 'string' },
  ...DISCOVERY_OPTIONS,
  ...WALK_LIMIT_OPTIONS,
  verbose: { type: 'boolean', short: 'v', multiple: true },
  'no-progress': { type: 'boolean' },
  ...NETWORK_OPTIONS,
  ...PLUGIN_OPTIONS,
} satisfies OptionSpec;

/** A duration that may also be given in hours or days (`--full-every 7d`). */
export function longDuration(p: Parsed, name: string, usage: string): number | undefined {
  const v = str(p, name);
  if (v === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)(h|d)$/.exec(v.trim());
  if (m !== null) return Math.round(Number(m[1]) * (m[2] === 'h' ? 3_600_000 : 86_400_000));
  return duration(p, name, usage);
}

/** The run's settings from the command line: `SiteRunOptions` without what the command opens. */
export type SiteWalkSettings = Omit<SiteRunOptions, 'webClient' | 'registry' | 'sink' | 'state' | 'gate'> & {
  readonly sites: number;
  readonly perHost: number;
};

/**
 * How every site is walked, from the flags `usp batch` and `usp worker` share: the web client's
 * options, and the run's settings as `SiteRunOptions` takes them (only those given, the runner
 * applies the defaults).
 */
export function siteWalkSettings(p: Parsed, usage: string) {
  const sites = integer(p, 'sites', usage, 1) ?? DEFAULT_SITES;
  const perHost = integer(p, 'per-host', usage, 1) ?? DEFAULT_PER_HOST;
  const given = (name: string, value: number | undefined) => (value === undefined ? {} : { [name]: value });
  const settings: SiteWalkSettings = {
    sites,
    perHost,
    walkOptions: {
      ...discoveryFrom(p),
      ...walkLimitsFrom(p, usage),
      gunzip: nodeGunzip,
    },
    ...given('siteDeadlineMs', duration(p, 'site-deadline', usage)),
    ...given('fullEveryMs', longDuration(p, 'full-every', usage)),
    ...given('maxCrawlDelayMs', duration(p, 'max-crawl-delay', usage)),
    ...given('probeTimeoutMs', duration(p, 'probe-timeout', usage)),
  };
  return { clientOptions: webClientOptionsFrom(p, usage), settings };
}

/**
 * How long the batch keeps an idle connection. A site's requests to its host follow each other
 * closely, and once the site is done its host is not visited again: with undici's 4 s, a
 * no-change run of 1,000 sites (5 s) ended holding a socket to nearly every host, 20-30 MB more.
 */
const BATCH_KEEP_ALIVE_MS = 1_000;

/** The one web client of a batch process. Its own limits stay out of the way: politeness is the gate's job. */
export function batchWebClient(
  clientOptions: WebClientOptions,
  sites: number,
  perHost: number,
): ReturnType<typeof createWebClient> {
  const client = createWebClient({
    ...clientOptions,
    maxConcurrentRequests: Math.max(16, sites * perHost),
    maxConnectionsPerHost: Math.max(perHost, 2),
    keepAliveTimeoutMs: BATCH_KEEP_ALIVE_MS,
  });
  // A refused private address names the library's option; on the command line it is a flag.
  // The reason lands in sites.ndjson and sitemaps.ndjson as well as on stderr.
  const get = client.get.bind(client);
  // `then`, not an async wrapper: one promise a request, not three (a no-change run is ~2.5 a site).
  client.get = (url, options) => get(url, options).then(flagNamed);
  return client;
}

function flagNamed(response: WebResponse): WebResponse {
  if (response.kind !== 'error' || response.code !== 'blocked') return response;
  return {
    ...response,
    message: response.message.replace('(option allowPrivateNetworks)', '(--allow-private-networks)'),
  };
}

/**
 * The sites a batch's user listed are origins they named, as the URL of `usp ls` is: each may be
 * on a private address without --allow-private-networks (what their sitemaps point to may not).
 * The client asks `allows` when it connects to a private origin; `note` passes the lines through,
 * learning their origins before the batch starts their sites.
 */
export function listedOrigins(): {
  allows: (origin: string) => boolean;
  note: (lines: AsyncIterable<string>) => AsyncGenerator<string>;
} {
  const origins = new Set<string>();
  return {
    allows: (origin) => origins.has(origin),
    async *note(lines) {
      for await (const line of lines) {
        const site = normalizeSite(line);
        // `normalizeSite` gives `scheme://host[:port]/`: the origin without its last slash.
        if (site !== null) origins.add(site.slice(0, -1));
        yield line;
      }
    },
  };
}
