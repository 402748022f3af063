import { createRequire } from 'node:module';
import { UsageError } from './args.js';
import { loadOptionalPackage } from './optional-package.js';

/** Where the signals that stop a command come from (the process's own). Returns how to stop listening. */
export type SignalSource = (onSignal: (signal: 'SIGINT' | 'SIGTERM') => void) => () => void;

const version: string = createRequire(import.meta.url)('../../package.json').version;

const USAGE = 'usage: usp [-h] [-v] <command> ...';

const HELP = `${USAGE}

Find and parse every sitemap of a website: robots.txt, sitemap indexes, urlsets, plain text,
RSS and Atom, with Google News, Image and Video data and hreflang alternates.

options:
  -h, --help     show this help message and exit
  -v, --version  show program's version number and exit

commands:
  ls             download, parse and list the sitemap structure
  parse          parse one sitemap document from a file or stdin (no network)
  validate       check sitemaps against the sitemaps.org protocol and Google's rules
  batch          walk many sites into NDJSON files: politely, resumably, incrementally
  worker         walk the sites "usp batch --queue" put on a Redis queue (many machines)
  export         write a run's page rows from an SQLite or PostgreSQL store as NDJSON or CSV
  report         write an HTML report of a site's sitemaps, a sitemap file or a batch run
  demo           serve an example site on 127.0.0.1 and list it, offline

Run "usp <command> --help" for a command's options.`;

type Command = (args: string[], signal: AbortSignal) => Promise<number>;

// Loaded on demand: `--version` and `--help` should not pay for the parsers and the HTTP client.
const COMMANDS: Record<string, () => Promise<{ run: Command; help: string }>> = {
  ls: async () => {
    const m = await import('./ls.js');
    return { run: m.runLs, help: m.LS_HELP };
  },
  parse: async () => {
    const m = await import('./parse.js');
    return { run: m.runParse, help: m.PARSE_HELP };
  },
  validate: async () => {
    const m = await import('./validate.js');
    return { run: m.runValidate, help: m.VALIDATE_HELP };
  },
  batch: async () => {
    const m = await import('./batch.js');
    return { run: m.runBatch, help: m.BATCH_HELP };
  },
  export: async () => {
    const m = await import('./export.js');
    return { run: m.runExport, help: m.EXPORT_HELP };
  },
  report: async () => {
    const m = await import('./report.js');
    return { run: m.runReport, help: m.REPORT_HELP };
  },
  demo: async () => {
    const m = await import('./demo.js');
    return { run: m.runDemo, help: m.DEMO_HELP };
  },
  worker: async () => {
    const m = await loadOptionalPackage('@usp-ts/queue-bullmq', 'usp worker', () => import('./worker.js'));
    return { run: m.runWorkerCommand, help: m.WORKER_HELP };
  },
};

/** `-vv` anywhere in the arguments: show stack traces. */
function debugRequested(args: string[]): boolean {
  return (
    args.some((a) => /^-v{2,}$/.test(a)) || args.filter((a) => a === '-v' || a === '--verbose').length >= 2
  );
}

async function main(argv: string[], signals: SignalSource): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === '-h' || first === '--help') {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (first === '-v' || first === '--version') {
    process.stdout.write(`usp v${version}\n`);
    return 0;
  }
  if (first === 'help') {
    const load = rest[0] !== undefined && Object.hasOwn(COMMANDS, rest[0]) ? COMMANDS[rest[0]] : undefined;
    process.stdout.write(`${load === undefined ? HELP : (await load()).help}\n`);
    return 0;
  }
  const load = Object.hasOwn(COMMANDS, first) ? COMMANDS[first] : undefined;
  if (load === undefined) {
    const message = first.startsWith('-')
      ? `unrecognized option ${JSON.stringify(first)}`
      : `invalid choice ${JSON.stringify(first)} (choose from ${Object.keys(COMMANDS).join(', ')})`;
    throw new UsageError(message, USAGE);
  }
  const command = await load();
  const controller = new AbortController();
  // 128 + the signal's number, as shells report it.
  let signalled: { exitCode: number } | null = null;
  const onSignal = (signal: NodeJS.Signals): void => {
    // The first signal stops the walk cleanly (temp files removed); a second one ends at once.
    const exitCode = signal === 'SIGTERM' ? 143 : 130;
    if (signalled !== null) process.exit(exitCode);
    signalled = { exitCode };
    controller.abort(new Error(`interrupted by ${signal}`));
  };
  const unsubscribe = signals(onSignal);
  try {
    const code = await command.run(rest, controller.signal);
    // `demo --serve` and `worker` wait for a signal to stop: that is their normal end.
    return signalled !== null && first !== 'demo' && first !== 'worker'
      ? (signalled as { exitCode: number }).exitCode
      : code;
  } catch (err) {
    if (signalled !== null) {
      process.stderr.write('usp: interrupted\n');
      return (signalled as { exitCode: number }).exitCode;
    }
    throw err;
  } finally {
    unsubscribe();
  }
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.message.split('\n')[0];
  return String(err);
}

/**
 * Runs one command line: its output, and the exit status (usage errors 2 with the usage line,
 * other errors 1 with one line, the stack too with `-vv`).
 */
export async function runCommandLine(argv: string[], signals: SignalSource): Promise<number> {
  try {
    return await main(argv, signals);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.usage}\nusp: error: ${err.message}\n`);
      return 2;
    }
    process.stderr.write(`usp: error: ${describe(err)}\n`);
    if (debugRequested(argv) && err instanceof Error && err.stack !== undefined) {
      process.stderr.write(`${err.stack}\n`);
    }
    return 1;
  }
}
