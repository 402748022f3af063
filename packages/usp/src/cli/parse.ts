import {
  AbstractPagesSitemap,
  countingPageStore,
  InvalidSitemap,
  isHttpUrl,
  isIndexSitemap,
  type Page,
  type ParsedSitemap,
  stripUrlToHomepage,
  type Warning,
} from '@usp-ts/core';
import { LOCAL_DUMMY_URL, parseSitemapDocument } from '../api/document.js';
import { filePageStore } from '../pages/file-store.js';
import {
  choice,
  count,
  flag,
  headersFrom,
  list,
  type OptionSpec,
  onePositional,
  parse,
  str,
  UsageError,
} from './args.js';
import { HELP_OPTIONS, LISTING_OUTPUT_OPTIONS, LOG_OPTIONS } from './flags.js';
import { inputNamer, type Namer, openInput } from './input.js';
import { Log } from './log.js';
import {
  CSV_HEADER,
  csvLine,
  FORMATS,
  type Format,
  ndjsonLine,
  Output,
  shown,
  stripUrl,
  writeTree,
} from './output.js';
import { PLUGIN_HELP, PLUGIN_OPTIONS, pluginsFrom } from './plugins.js';

export const PARSE_USAGE =
  'usage: usp parse [-h] [--url URL] [-H HEADER] [-f FORMAT] [-u] [-v] [-l LOG_FILE] file';

const PARSE_OPTIONS = {
  ...HELP_OPTIONS,
  url: { type: 'string' },
  header: { type: 'string', short: 'H', multiple: true },
  ...LISTING_OUTPUT_OPTIONS,
  ...LOG_OPTIONS,
  ...PLUGIN_OPTIONS,
} satisfies OptionSpec;

export const PARSE_HELP = `${PARSE_USAGE}

parse one sitemap document from a file or stdin, without network access

positional arguments:
  file                      path of the document, or - for stdin (gzip is detected by its bytes)

options:
  -h, --help                show this help message and exit
  --url URL                 where the document came from (default: ${LOCAL_DUMMY_URL}, usp's
                            stand-in): a URL ending in /robots.txt makes text robots.txt rather
                            than a plain-text sitemap; relative links resolve against it
  -H, --header HEADER       a response header, "Name: value" (repeatable)
  -f, --format FORMAT       tabtree (default), pages, json, ndjson or csv; an index's children
                            are listed as un-fetched (InvalidSitemap "Un-fetched child sitemap")
  -u, --strip-url           strip scheme://host/ of the URL from each URL
  -v, --verbose             more output on stderr (-v info, -vv debug)
  -l, --log-file LOG_FILE   write logs to this file instead of stderr
${PLUGIN_HELP}

exit status:
  0  the document is a sitemap (an index, a robots.txt or a list of pages, even an empty urlset)
  1  it is not one (HTML, an unknown root element, an empty file, text with no URL in it: the
     output is printed as usual and one line on stderr says why), or it could not be read
  2  usage error`;

function pageLine(
  out: Output,
  format: Exclude<Format, 'json'>,
  page: Page,
  url: string,
  prefix: string,
): string {
  switch (format) {
    case 'tabtree':
      return `\t${shown(out, stripUrl(page.url, prefix))}`;
    case 'pages':
      return shown(out, stripUrl(page.url, prefix));
    case 'ndjson':
      return ndjsonLine(page, url, prefix);
    case 'csv':
      return csvLine(page, url, prefix);
  }
}

/** Why the document is not a sitemap, or `null` when it is one. */
function notASitemap(parsed: ParsedSitemap): string | null {
  const node = parsed.sitemap;
  if (node instanceof InvalidSitemap) return node.reason;
  // What the tree drops as a soft 404: plain text with no URL in it (any non-XML body is "text").
  if (node instanceof AbstractPagesSitemap && node.type === 'PagesTextSitemap' && node.pageCount === 0) {
    return parsed.bytes === 0
      ? 'the document is empty'
      : 'no URL in it (a plain-text sitemap lists one absolute http(s) URL a line)';
  }
  return null;
}

/** One stderr line (never the log file: it is the command's result) and exit 1, or exit 0. */
function exitFor(url: string, parsed: ParsedSitemap, name: Namer): number {
  const reason = notASitemap(parsed);
  if (reason === null) return 0;
  process.stderr.write(`usp: ${name(url)}: not a sitemap: ${name(reason)}\n`);
  return 1;
}

function summary(log: Log, parsed: ParsedSitemap): void {
  log.info(
    `${parsed.sitemap.type}: ${parsed.bytes} bytes${parsed.truncated ? ', ended early' : ''}, ${parsed.children.length} children`,
  );
}

export async function runParse(args: string[], signal: AbortSignal): Promise<number> {
  const p = parse(args, PARSE_OPTIONS, PARSE_USAGE);
  if (flag(p, 'help')) {
    process.stdout.write(`${PARSE_HELP}\n`);
    return 0;
  }
  const file = onePositional(p, 'file', PARSE_USAGE);
  const given = str(p, 'url');
  const url = given ?? LOCAL_DUMMY_URL;
  // Messages name the file; the stand-in URL is only the base of relative links.
  const name = given === undefined ? inputNamer(file) : (text: string) => text;
  const onWarning = (w: Warning) => log.warning({ ...w, message: name(w.message), url: name(w.url) });
  if (!isHttpUrl(url)) throw new UsageError(`URL ${url} is not a HTTP(s) URL`, PARSE_USAGE);
  const format = choice(p, 'format', FORMATS, 'tabtree', PARSE_USAGE);
  const headers = headersFrom(list(p, 'header'), PARSE_USAGE);
  const { registry } = await pluginsFrom(p, PARSE_USAGE);
  const log = new Log(count(p, 'verbose'), str(p, 'log-file'));
  try {
    const body = await openInput(file);
    const out = new Output(process.stdout);
    const prefix = flag(p, 'strip-url') ? stripUrlToHomepage(url) : '';
    if (format === 'json') {
      // The JSON form needs the whole node: pages wait in a temp file meanwhile.
      const parsed = await parseSitemapDocument(body, {
        ...(registry !== undefined ? { registry } : {}),
        url,
        headers,
        onWarning,
        pageStore: filePageStore(),
        signal,
      });
      summary(log, parsed);
      await writeTree(out, parsed.sitemap, format, prefix);
      return exitFor(url, parsed, name);
    }
    // Every other format is written as the pages are parsed, and none is kept.
    if (format === 'tabtree') await out.line(shown(out, url));
    if (format === 'csv') await out.line(CSV_HEADER);
    const parsed = await parseSitemapDocument(body, {
      ...(registry !== undefined ? { registry } : {}),
      url,
      headers,
      onWarning,
      pageStore: countingPageStore(),
      signal,
      async onPages(pages) {
        for (const page of pages) {
          const pending = out.line(pageLine(out, format, page, url, prefix));
          if (pending) await pending;
        }
      },
    });
    summary(log, parsed);
    // An index's children (un-fetched) come after: a tabtree lists them as nodes.
    if (format === 'tabtree' && isIndexSitemap(parsed.sitemap)) {
      for (const child of parsed.sitemap.subSitemaps)
        await out.line(`\t${shown(out, stripUrl(child.url, prefix))}`);
    }
    await out.flush();
    return exitFor(url, parsed, name);
  } finally {
    log.summary();
    await log.close();
  }
}
