import type { Change, PageRow, PageRowFilter } from '@usp-ts/batch';
import { choice, flag, list, type OptionSpec, onePositional, parse, str, UsageError } from './args.js';
import { HELP_OPTIONS } from './flags.js';
import { csvField, Output } from './output.js';
import { openStoreReader } from './store-readers.js';

const EXPORT_USAGE =
  'usage: usp export [-h] [--run ID] [--change LIST] [--site URL] [-f {ndjson,csv}] <FILE.sqlite|sqlite:FILE|postgres://...>';

export const EXPORT_HELP = `${EXPORT_USAGE}

Write the page rows of one run of a result store (usp batch --out FILE.sqlite, usp worker --out
postgres://...) to stdout as NDJSON (the rows of pages.ndjson) or CSV, streaming: a pipeline picks
the day's changes without SQL.

positional arguments:
  store                  an SQLite file (FILE or sqlite:FILE) or a PostgreSQL URL; "postgres:"
                         alone takes the connection from PGHOST, PGDATABASE, PGUSER, ...
                         (PGPASSWORD or ~/.pgpass for the password, never the command line)

options:
  -h, --help             show this help message and exit
  --run ID               the run to export (default: latest, the run started last)
  --change LIST          only rows with these changes, comma-separated: new, changed,
                         unchanged, removed (default: all)
  --site URL             only this site (its homepage URL, as in the store)
  -f, --format FORMAT    ndjson (default) or csv

examples:
  usp export results.sqlite --change new,changed,removed > today.ndjson
  usp export postgres://usp@db/sitemaps --run 2026-11-29 -f csv > pages.csv

exit status: 0 written; 1 the store cannot be read (one line on stderr); 2 usage error`;

const EXPORT_OPTIONS = {
  ...HELP_OPTIONS,
  run: { type: 'string' },
  change: { type: 'string', multiple: true },
  site: { type: 'string' },
  format: { type: 'string', short: 'f' },
} satisfies OptionSpec;

const CHANGES: readonly Change[] = ['new', 'changed', 'unchanged', 'removed'];

const CSV_COLUMNS = [
  'site',
  'sitemap',
  'url',
  'change',
  'priority',
  'lastModified',
  'changeFrequency',
  'newsTitle',
  'newsPublishDate',
  'images',
  'alternates',
  'extensions',
].join(',');

function csvRow(row: PageRow): string {
  if (row.change === 'removed')
    return `${[row.site, row.sitemap, row.url, 'removed'].map(csvField).join(',')},,,,,,,,`;
  return [
    row.site,
    row.sitemap,
    row.url,
    row.change,
    row.priority,
    row.lastModified,
    row.changeFrequency,
    row.newsStory?.title,
    row.newsStory?.publishDate,
    row.images
      ?.map((i) => i.loc)
      .filter((l) => l !== null)
      .join(' '),
    row.alternates?.map((a) => `${a.hreflang}=${a.href}`).join(' '),
    row.extensions === undefined ? undefined : JSON.stringify(row.extensions),
  ]
    .map(csvField)
    .join(',');
}

export async function runExport(args: string[], signal: AbortSignal): Promise<number> {
  const p = parse(args, EXPORT_OPTIONS, EXPORT_USAGE);
  if (flag(p, 'help')) {
    process.stdout.write(`${EXPORT_HELP}\n`);
    return 0;
  }
  const spec = onePositional(p, 'store', EXPORT_USAGE);
  const format = choice(p, 'format', ['ndjson', 'csv'] as const, 'ndjson', EXPORT_USAGE);
  const changes = list(p, 'change')
    .flatMap((c) => c.split(','))
    .map((c) => c.trim())
    .filter((c) => c !== '');
  for (const c of changes) {
    if (!(CHANGES as readonly string[]).includes(c)) {
      throw new UsageError(
        `--change: ${JSON.stringify(c)} is not one of ${CHANGES.join(', ')}`,
        EXPORT_USAGE,
      );
    }
  }
  const filter: { -readonly [K in keyof PageRowFilter]: PageRowFilter[K] } = {};
  const run = str(p, 'run');
  if (run !== undefined) filter.run = run;
  if (changes.length > 0) filter.changes = changes as Change[];
  const site = str(p, 'site');
  if (site !== undefined) filter.site = site;
  const store = await openStoreReader(spec, 'usp export', EXPORT_USAGE);
  const out = new Output(process.stdout);
  if (format === 'csv') await out.line(CSV_COLUMNS);
  for await (const row of store.pageRows(filter)) {
    if (signal.aborted) break;
    const wait = out.line(format === 'csv' ? csvRow(row) : JSON.stringify(row));
    if (wait) await wait;
  }
  await out.flush();
  return 0;
}
