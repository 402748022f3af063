import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { isHttpUrl, stripUrlToHomepage } from '@usp-ts/core';
import { createWebClient } from '@usp-ts/fetcher';
import { clientOptionsFor, type WalkPagesOptions } from '../api/tree.js';
import { batchReportHtml } from '../report/batch-html.js';
import { collectBatchReport, storeReport } from '../report/batch-report.js';
import { collectFileReport } from '../report/file-report.js';
import { siteReportHtml } from '../report/site-html.js';
import { collectSiteReport, MAX_LISTED_URLS, URLS_PER_SITEMAP } from '../report/site-report.js';
import {
  count,
  duration,
  flag,
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
  LOG_OPTIONS,
  WALK_LIMIT_OPTIONS,
  walkLimitsFrom,
} from './flags.js';
import { openInput } from './input.js';
import { Log, Progress } from './log.js';
import { NETWORK_HELP, NETWORK_OPTIONS, webClientOptionsFrom } from './network.js';
import { PLUGIN_HELP, PLUGIN_OPTIONS, pluginsFrom } from './plugins.js';
import { hasScheme, openStoreReader } from './store-readers.js';

export const REPORT_USAGE =
  'usage: usp report [-h] [-o FILE] [--sitemap URL] [options] <url | file | batch-dir>';

const REPORT_OPTIONS = {
  ...HELP_OPTIONS,
  ...LOG_OPTIONS,
  ...DISCOVERY_OPTIONS,
  ...WALK_LIMIT_OPTIONS,
  output: { type: 'string', short: 'o' },
  run: { type: 'string' },
  sitemap: { type: 'string', multiple: true },
  deadline: { type: 'string' },
  'no-progress': { type: 'boolean' },
  ...PLUGIN_OPTIONS,
  ...NETWORK_OPTIONS,
} satisfies OptionSpec;

export const REPORT_HELP = `${REPORT_USAGE}

write one self-contained HTML file (styles, script and charts inline: it opens offline and
sends no request) that shows a site's sitemaps, or a batch run's results

positional arguments:
  url                       a site: walked as "usp ls" walks it (same discovery, limits,
                            network flags and warnings)
  file                      one sitemap document on disk ("-" for stdin), read as "usp parse"
                            reads it: an index's children are listed, not fetched
  batch-dir                 a "usp batch --out" directory: the run's sites, pages and changes
                            (what its journal says was committed)
  store                     a result store: an SQLite file (FILE.sqlite or sqlite:FILE) or a
                            PostgreSQL URL ("postgres:" alone reads PGHOST, PGUSER, ...): one
                            run's sites, pages and changes, as for a batch directory

options:
  -h, --help                show this help message and exit
  -o, --output FILE         where to write the report (default: usp-report.html)
  --sitemap URL             report exactly this sitemap and what its index names (repeatable)
  --run ID                  with a store: the run to report (default: the run started last)
  --deadline DURATION       stop the walk after this long; the report shows what was read
  --no-progress             no progress line (it shows only when stderr is a terminal)
  -v, --verbose             more output on stderr (-v info, -vv debug)
  -l, --log-file LOG_FILE   write logs to this file instead of stderr
  -r, --no-robots, -k, --no-known, --extra-known-path PATH, --wp, --sitemap-txt,
  --max-depth N, --max-sitemaps N, --max-pages N: as for "usp ls"
${PLUGIN_HELP}

${NETWORK_HELP}

what a site's report shows:
  totals          pages, sitemaps, sitemaps that could not be read, warnings
  Sitemaps        the tree, collapsible: each sitemap's type, HTTP status, size, time, pages
                  (an index: the sum below it) and warnings
  lastmod by month      pages per month of their <lastmod> (gaps shown; older than 10 years
                        in one "before" bar)
  lastmod, last 60 days pages per day of their <lastmod>, up to today
  Freshness       the share of pages updated within 7, 30 and 365 days, pages without
                  <lastmod>, <lastmod>s in the future
  changefreq      pages per <changefreq> value, "none" when not given
  priority        pages per <priority>, rounded to one decimal (0.5 when not given)
  News stories per day / per publication  Google News stories by publication date and name
  hreflang languages    pages naming each language; pages whose alternate does not link back
  Warnings        every warning code with its count, what it means and examples
  URLs            a searchable, paged list: up to ${groupDigits(URLS_PER_SITEMAP)} URLs a sitemap and ${groupDigits(MAX_LISTED_URLS)}
                  in all (every count above is exact)

what a batch report shows:
  Sites by status       how each site walk ended; the reasons of the sites not ok, grouped
  Pages per site        the 20 sites with most page rows
  new / changed / removed  page rows by change mark, in all and for the 20 sites with most
  Slowest sites / hosts the 20 longest site walks, and host names by their sites' time summed
  What the state saved  304 answers and documents not requested again

exit status:
  0  the report was written (a site with broken sitemaps included: the report shows them)
  1  the site could not be reached at all, the file or directory could not be read, or the
     report could not be written; one line on stderr says why
  2  usage error`;

type Target =
  | { kind: 'site'; url: string }
  | { kind: 'file'; path: string }
  | { kind: 'batch'; dir: string }
  | { kind: 'store'; spec: string };

/** An SQLite database file, by its header (a sitemap file could be named anything). */
function isSqliteFile(path: string): boolean {
  try {
    const fd = openSync(path, 'r');
    try {
      const head = Buffer.alloc(16);
      readSync(fd, head, 0, 16, 0);
      return head.toString('latin1') === 'SQLite format 3\0';
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}

function targetOf(value: string): Target {
  if (isHttpUrl(value)) return { kind: 'site', url: value };
  // Any other scheme names a result store (one that no driver takes is a usage error there).
  if (hasScheme(value) || (value !== '-' && isSqliteFile(value))) return { kind: 'store', spec: value };
  if (value !== '-') {
    try {
      if (statSync(value).isDirectory()) return { kind: 'batch', dir: value };
    } catch {
      // Not there: openInput says so in its own words.
    }
  }
  return { kind: 'file', path: value };
}

export async function runReport(args: string[], signal: AbortSignal): Promise<number> {
  const p = parse(args, REPORT_OPTIONS, REPORT_USAGE);
  if (flag(p, 'help')) {
    process.stdout.write(`${REPORT_HELP}\n`);
    return 0;
  }
  const sitemaps = list(p, 'sitemap');
  for (const s of sitemaps) {
    if (!isHttpUrl(s)) throw new UsageError(`--sitemap ${s} is not a HTTP(s) URL`, REPORT_USAGE);
  }
  const target: Target =
    sitemaps.length > 0 && p.positionals.length === 0
      ? { kind: 'site', url: stripUrlToHomepage(sitemaps[0]) }
      : targetOf(onePositional(p, 'url, file or batch directory', REPORT_USAGE));
  const output = str(p, 'output') ?? 'usp-report.html';
  const log = new Log(count(p, 'verbose'), str(p, 'log-file'));
  try {
    let html: string;
    if (target.kind === 'batch') html = batchReportHtml(await collectBatchReport(target.dir));
    else if (target.kind === 'store') {
      const store = await openStoreReader(target.spec, 'usp report', REPORT_USAGE);
      html = batchReportHtml(storeReport(store.shown, await store.runSummary(str(p, 'run'))));
    } else if (target.kind === 'file') {
      const { registry } = await pluginsFrom(p, REPORT_USAGE);
      const data = await collectFileReport({
        body: await openInput(target.path),
        name: target.path,
        ...(registry !== undefined ? { registry } : {}),
        onWarning: (w) => log.warning(w),
        signal,
      });
      html = siteReportHtml(data);
    } else {
      const site = await siteReport(p, target.url, sitemaps, log, signal);
      if (site === null) return 1;
      html = site;
    }
    await writeFile(output, html);
    process.stderr.write(
      `usp: report written to ${output} (${groupDigits(Buffer.byteLength(html))} bytes)\n`,
    );
    return 0;
  } finally {
    log.summary();
    await log.close();
  }
}

async function siteReport(
  p: ReturnType<typeof parse>,
  url: string,
  sitemaps: string[],
  log: Log,
  signal: AbortSignal,
): Promise<string | null> {
  const progress = new Progress(!flag(p, 'no-progress'));
  log.attach(progress);
  const options: WalkPagesOptions = {
    ...discoveryFrom(p),
    ...(sitemaps.length > 0 ? { sitemaps } : {}),
    ...walkLimitsFrom(p, REPORT_USAGE),
    deadlineMs: duration(p, 'deadline', REPORT_USAGE),
    webClientOptions: webClientOptionsFrom(p, REPORT_USAGE),
    signal,
    onProgress: (s) => progress.update({ sitemapsDone: s.sitemapsDone, pages: s.pages, bytes: s.bytes }),
  };
  const plugins = await pluginsFrom(p, REPORT_USAGE);
  if (plugins.urls.length > 0) options.pluginModules = plugins.urls;
  const client = createWebClient(await clientOptionsFor([url, ...sitemaps], { ...options.webClientOptions }));
  try {
    const { webClientOptions: _given, ...walkOptions } = options;
    const data = await collectSiteReport({
      url,
      options: { ...walkOptions, webClient: client },
      onWarning: (w) => log.warning(w),
    });
    progress.clear();
    if (data.summary.outcome === 'unreachable') {
      process.stderr.write(`usp: ${url}: site unreachable: ${data.summary.reason}\n`);
      return null;
    }
    return siteReportHtml(data);
  } finally {
    progress.clear();
    await client.close();
  }
}
