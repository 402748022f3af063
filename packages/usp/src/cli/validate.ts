import { isHttpUrl } from '@usp-ts/core';
import { type Finding, type ValidationReport, validateDocument, validateSitemap } from '../api/validate.js';
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
import { InputFileError } from './cli-errors.js';
import { groupDigits } from './digits.js';
import { HELP_OPTIONS, LOG_OPTIONS } from './flags.js';
import { inputNamer, type Namer, openInput } from './input.js';
import { Log, Progress } from './log.js';
import { NETWORK_HELP, NETWORK_OPTIONS, webClientOptionsFrom } from './network.js';
import { Output } from './output.js';
import { PLUGIN_HELP, PLUGIN_OPTIONS, pluginsFrom } from './plugins.js';

export const VALIDATE_USAGE =
  'usage: usp validate [-h] [-f FORMAT] [--url URL] [--no-follow] [--max-sitemaps N] [options] url_or_file';

const VALIDATE_OPTIONS = {
  ...HELP_OPTIONS,
  format: { type: 'string', short: 'f' },
  url: { type: 'string' },
  'no-follow': { type: 'boolean' },
  'max-sitemaps': { type: 'string' },
  'max-per-code': { type: 'string' },
  ...LOG_OPTIONS,
  ...PLUGIN_OPTIONS,
  'no-progress': { type: 'boolean' },
  ...NETWORK_OPTIONS,
} satisfies OptionSpec;

export const VALIDATE_HELP = `${VALIDATE_USAGE}

check sitemaps against the sitemaps.org protocol and Google's rules

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
  --url URL                 for a file: where it lives (enables the host checks); without it the
                            report names the file
  --no-follow               don't check the sitemaps an index names
  --max-sitemaps N          check at most N documents (default 1000)
  --max-per-code N          findings of one code shown in full per sitemap, then one line counts
                            the rest (default 10; 0: all). -f json keeps every finding
  -v, --verbose             more output on stderr (-v info, -vv debug)
  -l, --log-file LOG_FILE   write logs to this file instead of stderr
${PLUGIN_HELP}
  --no-progress             no progress line (it shows only when stderr is a terminal)

${NETWORK_HELP}

exit status:
  0  checked, no findings
  1  checked, with findings (errors or warnings)
  2  nothing could be checked: usage error, a file that cannot be read, or a site that gave no
     HTTP response at all (refused, timeout, DNS, TLS, address blocked); one line on stderr says why`;

/** Exit status when nothing could be checked, as grep's 2: a script can tell it from findings. */
const COULD_NOT_RUN = 2;

function location(f: Finding): string {
  if (f.entry !== undefined) return `entry ${f.entry}`;
  if (f.line !== undefined) return `line ${f.line}`;
  return '-';
}

function plural(n: number, word: string): string {
  return `${groupDigits(n)} ${word}${n === 1 ? '' : 's'}`;
}

function entryCount(n: number): string {
  return `${n} ${n === 1 ? 'entry' : 'entries'}`;
}

const asIs: Namer = (text) => text;

export interface HumanReportOptions {
  /** Findings of one code shown in full per sitemap; the rest are counted. 0: all. */
  maxPerCode: number;
  name?: Namer;
}

/**
 * The human report, as a linter prints one: findings grouped by sitemap, at most `maxPerCode`
 * of one code per sitemap and then one line counting the rest, and a summary by code.
 */
export async function writeHumanReport(
  out: Output,
  report: ValidationReport,
  options: HumanReportOptions,
): Promise<void> {
  const name = options.name ?? asIs;
  const limit = options.maxPerCode === 0 ? Number.POSITIVE_INFINITY : options.maxPerCode;
  const bySitemap = new Map<string, Finding[]>();
  for (const f of report.findings) {
    const list = bySitemap.get(f.sitemap);
    if (list === undefined) bySitemap.set(f.sitemap, [f]);
    else list.push(f);
  }
  const writeFindings = async (findings: readonly Finding[]) => {
    const shown = new Map<string, number>();
    for (const f of findings) {
      const n = shown.get(f.code) ?? 0;
      shown.set(f.code, n + 1);
      if (n >= limit) continue;
      const pending = out.line(
        `  ${f.severity.padEnd(8)}${location(f).padEnd(13)}${f.code.padEnd(20)}${name(f.message)}`,
      );
      if (pending) await pending;
    }
    for (const [code, n] of shown) {
      if (n > limit) await out.line(`  … and ${groupDigits(n - limit)} more [${code}]`);
    }
  };
  const listed = new Set<string>();
  for (const s of report.sitemaps) {
    listed.add(s.url);
    const findings = bySitemap.get(s.url) ?? [];
    const what =
      s.type === 'InvalidSitemap' ? 'not a sitemap' : `${s.type}, ${entryCount(s.entries)}, ${s.bytes} bytes`;
    await out.line(`${name(s.url)} (${what})${findings.length === 0 ? ': ok' : ''}`);
    await writeFindings(findings);
  }
  // Findings about a URL that never became a document of its own (a redirect's origin).
  for (const [url, findings] of bySitemap) {
    if (listed.has(url)) continue;
    await out.line(name(url));
    await writeFindings(findings);
  }
  await out.line('');
  if (report.findings.length > 0) {
    const counts = new Map<string, { severity: string; code: string; n: number }>();
    for (const f of report.findings) {
      const key = `${f.severity} ${f.code}`;
      const c = counts.get(key);
      if (c === undefined) counts.set(key, { severity: f.severity, code: f.code, n: 1 });
      else c.n++;
    }
    // Errors first, then the most frequent.
    const rows = [...counts.values()].sort((a, b) =>
      a.severity === b.severity ? b.n - a.n : a.severity === 'error' ? -1 : 1,
    );
    const width = Math.max(...rows.map((r) => groupDigits(r.n).length));
    await out.line('summary:');
    for (const r of rows) {
      await out.line(`  ${r.severity.padEnd(8)}${r.code.padEnd(20)}${groupDigits(r.n).padStart(width)}`);
    }
  }
  const total =
    report.findings.length === 0
      ? `no findings in ${plural(report.sitemaps.length, 'sitemap')}`
      : `${plural(report.errors, 'error')}, ${plural(report.warnings, 'warning')} in ${plural(report.sitemaps.length, 'sitemap')}`;
  await out.line(
    report.unchecked > 0 ? `${total} (${report.unchecked} more not checked: --max-sitemaps)` : total,
  );
  await out.flush();
}

/**
 * The JSON report, written piece by piece (one finding a line) rather than as one string: a
 * report of 200,000 findings would otherwise be built whole in memory before the first byte.
 * Every finding is kept.
 */
export async function writeJsonReport(
  out: Output,
  report: ValidationReport,
  name: Namer = asIs,
): Promise<void> {
  const named = (f: Finding): Finding => ({ ...f, message: name(f.message), sitemap: name(f.sitemap) });
  await out.line(`{"ok":${report.ok},"errors":${report.errors},"warnings":${report.warnings},"findings":[`);
  const last = report.findings.length - 1;
  for (let i = 0; i <= last; i++) {
    const pending = out.line(`${JSON.stringify(named(report.findings[i]))}${i < last ? ',' : ''}`);
    if (pending) await pending;
  }
  const sitemaps = report.sitemaps.map((s) => ({ ...s, url: name(s.url) }));
  await out.line(
    `],"sitemaps":${JSON.stringify(sitemaps)},"unchecked":${report.unchecked},"reached":${report.reached}}`,
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
  const maxPerCode = integer(p, 'max-per-code', VALIDATE_USAGE) ?? 10;
  const { registry } = await pluginsFrom(p, VALIDATE_USAGE);
  const withRegistry = registry !== undefined ? { registry } : {};
  let name = asIs;
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
        ...withRegistry,
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
          log.info(`${s.url}: ${s.type}, ${entryCount(s.entries)}, ${plural(findings.length, 'finding')}`);
        },
      });
    } else {
      let input: Awaited<ReturnType<typeof openInput>>;
      try {
        input = await openInput(target);
      } catch (err) {
        if (!(err instanceof InputFileError)) throw err;
        process.stderr.write(`usp: error: ${err.message}\n`);
        return COULD_NOT_RUN;
      }
      report = await validateDocument(input, { url, ...withRegistry });
      if (url === undefined) name = inputNamer(target);
    }
  } finally {
    progress.clear();
    await log.close();
  }
  const out = new Output(process.stdout);
  if (format === 'json') await writeJsonReport(out, report, name);
  else await writeHumanReport(out, report, { maxPerCode, name });
  if (!report.reached) {
    const why = report.findings[report.findings.length - 1]?.message ?? 'no response';
    process.stderr.write(`usp: ${target}: site unreachable: ${why}\n`);
    return COULD_NOT_RUN;
  }
  return report.ok ? 0 : 1;
}
