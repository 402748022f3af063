import { isPagesSitemap } from '@usp-ts/core';
import { choice, count, flag, integer, type OptionSpec, parse, UsageError } from './args.js';
import { startDemoServer } from './demo-site.js';
import { HELP_OPTIONS, LISTING_OUTPUT_OPTIONS, LOG_OPTIONS } from './flags.js';
import { runListing, STREAMED } from './listing.js';
import { Log, Progress } from './log.js';
import { FORMATS, Output } from './output.js';

export const DEMO_USAGE = 'usage: usp demo [-h] [-f FORMAT] [-u] [-v] [--serve [--port N]]';

const DEMO_OPTIONS = {
  ...HELP_OPTIONS,
  ...LISTING_OUTPUT_OPTIONS,
  verbose: LOG_OPTIONS.verbose,
  serve: { type: 'boolean' },
  port: { type: 'string' },
} satisfies OptionSpec;

export const DEMO_HELP = `${DEMO_USAGE}

serve an example site on 127.0.0.1 and list it with "usp ls", offline

The site has a robots.txt naming several sitemaps, a sitemap index, a gzipped urlset with
hreflang alternates, Google News, Image and Video sitemaps, a plain-text sitemap, an RSS and an
Atom feed, a sitemap found only through the well-known paths, a truncated sitemap and one that
robots.txt names but the server does not have.

options:
  -h, --help                show this help message and exit
  -f, --format FORMAT       tabtree (default), pages, json, ndjson or csv
  -u, --strip-url           strip the homepage URL from each URL
  -v, --verbose             more output on stderr (-v info, -vv debug)
  --serve                   keep serving the site (until Ctrl-C) to try other commands on it
  --port N                  the port on 127.0.0.1 to serve it on (default: any free port)`;

export async function runDemo(args: string[], signal: AbortSignal): Promise<number> {
  const p = parse(args, DEMO_OPTIONS, DEMO_USAGE);
  if (flag(p, 'help')) {
    process.stdout.write(`${DEMO_HELP}\n`);
    return 0;
  }
  const format = choice(p, 'format', FORMATS, 'tabtree', DEMO_USAGE);
  const port = integer(p, 'port', DEMO_USAGE, 1);
  if (port !== undefined && port > 65_535) {
    throw new UsageError(`option --port expects a port from 1 to 65535, got ${port}`, DEMO_USAGE);
  }
  const log = new Log(count(p, 'verbose'));
  const progress = new Progress(true);
  log.attach(progress);
  const server = await startDemoServer(port);
  try {
    const home = `${server.origin}/`;
    process.stderr.write(`usp demo: serving an example site at ${home}; running: usp ls ${home}\n\n`);
    const { tree } = await runListing({
      url: home,
      format,
      strip: flag(p, 'strip-url'),
      // Loopback is a private address: the fetcher refuses it unless told otherwise.
      options: { webClientOptions: { allowPrivateHosts: ['127.0.0.1'] }, signal },
      log,
      progress,
      out: new Output(process.stdout, { eager: STREAMED.has(format) }),
    });
    if (tree !== null) {
      let sitemaps = 0;
      let pages = 0;
      const invalid: string[] = [];
      for (const s of tree.allSitemaps()) {
        sitemaps++;
        if (s.type === 'InvalidSitemap') invalid.push(`  ${s.url}: ${s.reason}`);
      }
      for (const s of tree.allSitemaps()) if (isPagesSitemap(s)) pages += s.pageCount;
      process.stderr.write(
        `\n${sitemaps} sitemaps, ${pages} pages. ${invalid.length} could not be read:\n${invalid.join('\n')}\n` +
          `The products sitemap is cut off mid-entry: the pages before the cut are kept.\nTry: usp demo -f json, usp demo -f pages -u, usp demo --serve\n`,
      );
    }
    if (flag(p, 'serve')) {
      process.stderr.write(
        `\nServing ${home} until Ctrl-C. Try:\n  usp ls ${home}\n  usp validate ${home}\n`,
      );
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
  } finally {
    await server.close();
    log.summary();
  }
  return 0;
}
