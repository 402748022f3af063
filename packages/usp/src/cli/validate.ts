import { isHttpUrl } from '@usp-ts/core';
import { type Finding, type ValidationReport, validateDocument, validateSitemap } from '../validate.js';
import {
  choice,
  count,
  flag,
  integer,
  type OptionSpec,
  onePositional,
  parse,
  str,
  UsageError,
} from './args.js';
import { Log, Progress } from './log.js';
import { NETWORK_HELP, NETWORK_OPTIONS, webClientOptionsFrom } from './network.js';
import { Output } from './output.js';
import { openInput } from './parse.js';

export const VALIDATE_USAGE =
  'usage: usp validate [-h] [-f FORMAT] [--url URL] [--no-follow] [--max-sitemaps N] [options] url_or_file';

const VALIDATE_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  format: { type: 'string', short: 'f' },
  url: { type: 'string' },
  'no-follow': { type: 'boolean' },
  'max-sitemaps': { type: 'string' },
  verbose: { type: 'boolean', short: 'v', multiple: true },
  'log-file': { type: 'string', short: 'l' },
  'no-progress': { type: 'boolean' },
  ...NETWORK_OPTIONS,
} satisfies OptionSpec;

export const VALIDATE_HELP = `${VALIDATE_USAGE}

check sitemaps against the sitemaps.org protocol and Google's rules; exit 0 when clean, 1 on findings

positional arguments:
  url_or_file               a sitemap URL (its children are checked too), a homepage URL (its
                            robots.txt and the sitemaps it names), a file, or - for stdin

checks:
  more than 50,000 URLs or 50 MB uncompressed; missing or wrong namespace; relative URLs and
  <loc>s on another host or scheme (unless cross-submitted through robots.txt) or outside the
  sitemap's directory; invalid dates, priorities and change frequencies; duplicate URLs;
  HTML served instead of a sitemap; a missing or wrong Content-Type; fetch failures.

options:
  -h, --help                show this help message and exit
  -f, --format FORMAT       human (default) or json
  --url URL                 for a file: where it lives (enables the host checks)
  --no-follow               don't check the sitemaps an index names
  --max-sitemaps N          check at most N documents (default 1000)
  -v, --verbose             more output on stderr (-v info, -vv debug)
  -l, --log-file LOG_FILE   write logs to this file instead of stderr
  --no-progress             no progress line (it shows only when stderr is a terminal)

${NETWORK_HELP}`;

function location(f: Finding): string {
  if (f.entry !== undefined) return `entry ${f.entry}`;
  if (f.line !== undefined) return `line ${f.line}`;
  return '-';
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The human report: findings grouped by sitemap, one line each, then a total. */
export async function writeHumanReport(out: Output, report: ValidationReport): Promise<void> {
  const bySitemap = new Map<string, Finding[]>();
  for (const f of report.findings) {
    const list = bySitemap.get(f.sitemap);
    if (list === undefined) bySitemap.set(f.sitemap, [f]);
    else list.push(f);
  }
  const listed = new Set<string>();
  for (const s of report.sitemaps) {
    listed.add(s.url);
    const findings = bySitemap.get(s.url) ?? [];
    const what =
      s.type === 'InvalidSitemap' ? 'not a sitemap' : `${s.type}, ${s.entries} entries, ${s.bytes} bytes`;
    await out.line(`${s.url} (${what})${findings.length === 0 ? ': ok' : ''}`);
    for (const f of findings) {
      await out.line(`  ${f.severity.padEnd(8)}${location(f).padEnd(13)}${f.code.padEnd(20)}${f.message}`);
    }
  }
  // Findings about a URL that never became a document of its own (a redirect's origin).
  for (const [url, findings] of bySitemap) {
    if (listed.has(url)) continue;
    await out.line(url);
    for (const f of findings) {
      await out.line(`  ${f.severity.padEnd(8)}${location(f).padEnd(13)}${f.code.padEnd(20)}${f.message}`);
    }
  }
  await out.line('');
  const total =
    report.findings.length === 0
      ? `no findings in ${plural(report.sitemaps.length, 'sitemap')}`
      : `${plural(report.errors, 'error')}, ${plural(report.warnings, 'warning')} in ${plural(report.sitemaps.length, 'sitemap')}`;
  await out.line(
    report.unchecked > 0 ? `${total} (${report.unchecked} more not checked: --max-sitemaps)` : total,
  );
  await out.flush();
}

export async function runValidate(args: string[], signal: AbortSignal): Promise<number> {
  const p = parse(args, VALIDATE_OPTIONS, VALIDATE_USAGE);
  if (flag(p, 'help')) {
    process.stdout.write(`${VALIDATE_HELP}\n`);
    return 0;
  }
  const target = onePositional(p, 'url_or_file', VALIDATE_USAGE);
  const format = choice(p, 'format', ['human', 'json'] as const, 'human', VALIDATE_USAGE);
  const url = str(p, 'url');
  if (url !== undefined && !isHttpUrl(url))
    throw new UsageError(`URL ${url} is not a HTTP(s) URL`, VALIDATE_USAGE);
  const maxSitemaps = integer(p, 'max-sitemaps', VALIDATE_USAGE, 1);
  const webClientOptions = webClientOptionsFrom(p, VALIDATE_USAGE);
  const concurrency = integer(p, 'concurrency', VALIDATE_USAGE, 1);
  const log = new Log(count(p, 'verbose'), str(p, 'log-file'));
  const progress = new Progress(!flag(p, 'no-progress'));
  log.attach(progress);
  let report: ValidationReport;
  try {
    if (/^https?:\/\//i.test(target)) {
      if (!isHttpUrl(target)) throw new UsageError(`URL ${target} is not a HTTP(s) URL`, VALIDATE_USAGE);
      let done = 0;
      let bytes = 0;
      let entries = 0;
      report = await validateSitemap(target, {
        webClientOptions,
        followChildren: !flag(p, 'no-follow'),
        maxSitemaps,
        concurrency,
        signal,
        onSitemap(s, findings) {
          done++;
          bytes += s.bytes;
          entries += s.entries;
          progress.update({ sitemapsDone: done, pages: entries, bytes });
          log.info(`${s.url}: ${s.type}, ${s.entries} entries, ${plural(findings.length, 'finding')}`);
        },
      });
    } else {
      report = await validateDocument(await openInput(target), { url });
    }
  } finally {
    progress.clear();
    await log.close();
  }
  const out = new Output(process.stdout);
  if (format === 'json') {
    await out.line(JSON.stringify(report, null, 2));
    await out.flush();
  } else {
    await writeHumanReport(out, report);
  }
  return report.ok ? 0 : 1;
}
