import { DEFAULT_MAX_SITEMAPS, isHttpUrl, stripUrlToHomepage, type WalkSummary } from '@usp-ts/core';
import { createWebClient, type RetryInfo } from '@usp-ts/fetcher';
import { clientOptionsFor, type SitemapTreeOptions } from '../api/tree.js';
import { collectOnExternalGrowth } from '../node/external-memory-gc.js';
import { tuneParseWorkers } from '../worker/pool.js';
import {
  choice,
  count,
  duration,
  flag,
  integer,
  list,
  type OptionSpec,
  onePositional,
  parse,
  str,
  UsageError,
} from './args.js';
import { groupDigits } from './digits.js';
import {
  DISCOVERY_OPTIONS,
  discoveryFrom,
  HELP_OPTIONS,
  LISTING_OUTPUT_OPTIONS,
  LOG_OPTIONS,
  WALK_LIMIT_OPTIONS,
  walkLimitsFrom,
} from './flags.js';
import { runListing, STREAMED } from './listing.js';
import { Log, Progress } from './log.js';
import { NETWORK_HELP, NETWORK_OPTIONS, webClientOptionsFrom } from './network.js';
import { FORMATS, Output } from './output.js';
import { PLUGIN_HELP, PLUGIN_OPTIONS, pluginsFrom } from './plugins.js';
import { capSemiSpaces } from './semi-space-cap.js';
import { FirstNetworkFailure, unreachableLine } from './unreachable-line.js';

export const LS_USAGE =
  'usage: usp ls [-h] [-f FORMAT] [-r] [-k] [-u] [-v] [-l LOG_FILE] [--extra-known-path PATH] [--sitemap URL] [options] [url]';

const LS_OPTIONS = {
  ...HELP_OPTIONS,
  ...LISTING_OUTPUT_OPTIONS,
  ...LOG_OPTIONS,
  ...DISCOVERY_OPTIONS,
  ...WALK_LIMIT_OPTIONS,
  sitemap: { type: 'string', multiple: true },
  'no-normalize-homepage': { type: 'boolean' },
  deadline: { type: 'string' },
  'parse-workers': { type: 'string' },
  'no-progress': { type: 'boolean' },
  ...PLUGIN_OPTIONS,
  ...NETWORK_OPTIONS,
} satisfies OptionSpec;

export const LS_HELP = `${LS_USAGE}

download, parse and list the sitemap structure

positional arguments:
  url                       URL of the site, usually its homepage (optional with --sitemap); a
                            sitemap's URL walks its whole site (a note says so): --sitemap URL
                            reads just that one

options:
  -h, --help                show this help message and exit
  -f, --format FORMAT       output format (default: tabtree):
                              tabtree  sitemaps and pages, nested with tab indentation
                              pages    flat list of pages, one per line, as pages arrive
                              json     the whole tree as JSON, once the walk is over
                              ndjson   one JSON object per page, with its sitemap, as pages arrive
                              csv      one row per page, with its sitemap, as pages arrive
                            tabtree and json print the tree in its order (tabtree each
                            sitemap once it and those before it are read, json once the walk
                            is over); the streamed formats print each sitemap's pages in
                            document order, interleaved with other sitemaps' fetched at the
                            same time
  -r, --no-robots           don't discover sitemaps through robots.txt
  -k, --no-known            don't discover sitemaps through the well-known paths
  -u, --strip-url           strip the homepage URL from each URL (the first line keeps it)
  -v, --verbose             more output on stderr (-v info, -vv debug)
  -l, --log-file LOG_FILE   write logs to this file instead of stderr
  --extra-known-path PATH   also probe this path (repeatable), joined to the homepage as given
  --sitemap URL             walk exactly this sitemap and what its index names (repeatable); no
                            robots.txt, no known paths. The homepage (the root line, -u's prefix)
                            is url, else the first sitemap's scheme://host/
  --wp                      also probe /wp-sitemap.xml (WordPress)
  --sitemap-txt             also probe /sitemap.txt
  --no-normalize-homepage   don't reduce the URL to scheme://host/ first: walk it as a directory,
                            a / appended as usp does (for one sitemap, use --sitemap)
  --no-progress             no progress line (it shows only when stderr is a terminal)
${PLUGIN_HELP}

limits:
  --max-depth N             index nesting followed, robots.txt being 0 (default 11, as usp)
  --deadline DURATION       stop the whole walk after this long, keeping what was read
                            (default: none)
  --max-sitemaps N          fetch at most N sitemaps (default ${groupDigits(DEFAULT_MAX_SITEMAPS)})
  --max-pages N             stop after N pages (default: none)
  --parse-workers N         worker threads parsing large sitemaps while another is parsed on the
                            main thread (default 1 on two or more cores, else 0; 0: main thread only)

${NETWORK_HELP}

a host that refuses, stays silent or fails DNS/TLS is tried twice per request (5 times for the
retryable HTTP statuses, waiting the longer of Retry-After and the backoff); once a request to a
host got no response after its retries, or 3 in a row were answered 429/503, the walk gives that
host up and its other sitemaps are listed as "host unreachable" (-v shows each retry).

exit status:
  0  the walk ran, whatever it found: a site with no sitemap, 404s, broken sitemaps included;
     also when --deadline or --max-* cut it after something was read (a warning names the limit)
  1  the site could not be reached at all: no request got an HTTP response (connection refused,
     timeout, DNS, TLS, address blocked, or --deadline before any answer); one line on
     stderr says why
  2  usage error
  130, 143  interrupted (Ctrl-C, SIGTERM)`;

/**
 * The main thread's semi-spaces, MiB (V8's own limit is 16). On the bench's 1M-URL site, peak RSS
 * of the process in paired runs under load: tabtree 158-169 -> 134-146 MiB, `--parse-workers 0`
 * 130-140 -> 100-114 MiB. 8 MiB saved less in tabtree (146-156); 2 MiB cost more in one-thread
 * mode (120 MiB: more is promoted). Why it is done this way: semi-space-cap.ts.
 */
const LS_SEMI_SPACE_MB = 4;
/**
 * Growth of external memory (spent Buffers: HTTP chunks, gunzip output) that starts a full
 * collection, MiB, in the main thread and in the parse worker. At 8 and 8, with the worker's
 * semi-spaces as the main thread's, each thread's external memory peaked at ~13 MiB and the
 * process at 110-114 MiB (1M-URL site); at 4 and 2, with the worker's semi-spaces at 2 MiB
 * (`LS_WORKER_YOUNG_MB`), 97-101 MiB; at 2 and 1, 95.9-98.3 MiB (8 runs alternated with 4 and 2,
 * session 18), CPU within the noise of those runs. Since the XML fast path (issue 37) a parse
 * makes less garbage: these collections cost less than they did. Alternatives measured then:
 * docs/memory.md.
 */
const LS_EXTERNAL_STEP_MB = 2;
const LS_WORKER_EXTERNAL_STEP_MB = 1;
/**
 * The parse worker's young generation, MiB (V8's is three semi-spaces: 2 MiB each). With 4 MiB
 * semi-spaces, as the main thread's, it held ~4 MiB more at the peak.
 */
const LS_WORKER_YOUNG_MB = 6;

export async function runLs(args: string[], signal: AbortSignal): Promise<number> {
  const p = parse(args, LS_OPTIONS, LS_USAGE);
  if (flag(p, 'help')) {
    process.stdout.write(`${LS_HELP}\n`);
    return 0;
  }
  const sitemaps = list(p, 'sitemap');
  for (const sitemap of sitemaps) {
    if (!isHttpUrl(sitemap)) throw new UsageError(`--sitemap ${sitemap} is not a HTTP(s) URL`, LS_USAGE);
  }
  const url =
    sitemaps.length > 0 && p.positionals.length === 0
      ? stripUrlToHomepage(sitemaps[0])
      : onePositional(p, 'url', LS_USAGE);
  if (!isHttpUrl(url)) throw new UsageError(`URL ${url} is not a HTTP(s) URL`, LS_USAGE);
  const normalizeHomepage = !flag(p, 'no-normalize-homepage');
  // usp appends the `/` (normalize_homepage_url=False); said aloud, since `.../sitemap.xml` then
  // becomes a directory that most likely lists nothing.
  const appendsSlash = !normalizeHomepage && !url.endsWith('/');
  const format = choice(p, 'format', FORMATS, 'tabtree', LS_USAGE);
  const walksOneSitemap = normalizeHomepage && sitemaps.length === 0 && looksLikeSitemap(url);
  const options: SitemapTreeOptions = {
    ...discoveryFrom(p),
    normalizeHomepage,
    ...(sitemaps.length > 0 ? { sitemaps } : {}),
    ...walkLimitsFrom(p, LS_USAGE),
    parseWorkers: integer(p, 'parse-workers', LS_USAGE),
    deadlineMs: duration(p, 'deadline', LS_USAGE),
    webClientOptions: webClientOptionsFrom(p, LS_USAGE),
    signal,
  };
  // Loaded here to fail early and in one line; the walk and its workers load the same URLs.
  const plugins = await pluginsFrom(p, LS_USAGE);
  if (plugins.urls.length > 0) options.pluginModules = plugins.urls;
  const log = new Log(count(p, 'verbose'), str(p, 'log-file'));
  const progress = new Progress(!flag(p, 'no-progress'));
  log.attach(progress);
  if (appendsSlash) {
    log.note(
      `--no-normalize-homepage: walking ${url}/ as the homepage, as usp does (to read just the sitemap ${url} and what it names: usp ls --sitemap ${url})`,
    );
  }
  if (walksOneSitemap) {
    log.note(
      `${url} looks like a sitemap; walking the whole site from ${stripUrlToHomepage(url)} (to read just that sitemap and what it names: usp ls --sitemap ${url})`,
    );
  }
  const client = createWebClient(
    await clientOptionsFor([url, ...sitemaps], {
      ...options.webClientOptions,
      onRetry: (r) => log.info(retryLine(r)),
    }),
  );
  // Before the cap: it sets a V8 flag, and the cap watches V8's flags from the moment it is set.
  collectOnExternalGrowth(LS_EXTERNAL_STEP_MB);
  capSemiSpaces(LS_SEMI_SPACE_MB);
  // The parse worker's young generation and collections for spent buffers. Before the fast path,
  // semi-spaces of 2 MiB ran twice the scavenges for the same allocation (2.6M-URL site: 2,052
  // against 1,011); without the collections, the larger young generation let spent chunks pile
  // up (peak 123 -> 156 MiB).
  tuneParseWorkers({ youngGenerationMb: LS_WORKER_YOUNG_MB, externalGcStepMb: LS_WORKER_EXTERNAL_STEP_MB });
  let summary: WalkSummary | undefined;
  const failure = new FirstNetworkFailure();
  log.holdFailures();
  try {
    const out = new Output(process.stdout, { eager: STREAMED.has(format) });
    ({ summary } = await runListing({
      url,
      format,
      strip: flag(p, 'strip-url'),
      options: { ...options, webClient: failure.watch(client) },
      log,
      progress,
      out,
    }));
  } finally {
    progress.clear();
    // A site never reached gets one line, below; -v shows each failed request.
    if (summary?.outcome === 'unreachable') log.dropHeld();
    else log.release();
    log.summary();
    await log.close();
    await client.close();
  }
  if (summary.outcome === 'unreachable') {
    const proxySource = str(p, 'proxy') !== undefined ? 'set by --proxy' : 'set in the environment';
    process.stderr.write(`${unreachableLine(url, summary, failure.first, proxySource)}\n`);
    return 1;
  }
  return 0;
}

/**
 * A URL a user more likely meant as one sitemap than as a site: a path naming a sitemap or a
 * document of a sitemap format (`/sitemap_index.xml`, `/feed.rss`, `/sitemap.txt.gz`). robots.txt
 * is left out: the walk reads it first anyway.
 */
export function looksLikeSitemap(url: string): boolean {
  const path = new URL(url).pathname.toLowerCase();
  if (path.endsWith('/robots.txt')) return false;
  return /sitemap/.test(path) || /\.(xml|txt|rss|atom)(\.gz)?$/.test(path);
}

/** One `-v` line per retry: a user watching a slow run sees why it waits. */
export function retryLine(r: RetryInfo): string {
  const wait = r.delayMs >= 1000 ? `${(r.delayMs / 1000).toFixed(1)} s` : `${r.delayMs} ms`;
  return `retrying ${r.url} (attempt ${r.attempt + 1} of ${r.maxAttempts}) in ${wait}: ${r.reason}`;
}
