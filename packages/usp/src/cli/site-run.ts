import {
  OutputError,
  ProgressCounter,
  type SiteResult,
  type SiteRunOptions,
  StateStoreError,
} from '@usp-ts/batch';
import type { Registry, RegistryLoader } from '@usp-ts/core';
import type { WebClientOptions } from '@usp-ts/fetcher';
import { count, flag, list, type Parsed, str } from './args.js';
import { type OutputContext, openRunOutput, type RunOutput } from './backends.js';
import { BatchReport, siteLine } from './batch-report.js';
import { loadDefaultRegistry } from './default-registry.js';
import { batchWebClient, siteWalkSettings } from './site-walk.js';

// What `usp batch` and `usp worker` do alike before their first site and after their last: read
// the flags they share (usage errors first), open the web client, the output and its state,
// report progress and each site's line, say a stop in one line, and close everything.

/** The shared flags of a many-sites command, read and checked; nothing opened yet. */
export interface SiteRunFlags {
  readonly settings: ReturnType<typeof siteWalkSettings>['settings'];
  readonly clientOptions: WebClientOptions;
  /** The default formats, imported when first needed; with `--plugin`, loaded at start. */
  readonly registry: Registry | RegistryLoader;
  readonly state: string | undefined;
  readonly gzip: boolean;
  readonly verbose: number;
  /** The progress line and the summary (stderr). */
  readonly report: BatchReport;
}

/** Reads the shared flags; a `--plugin` module that cannot be loaded is a usage error, as in `usp ls`. */
export async function siteRunFlags(p: Parsed, usage: string): Promise<SiteRunFlags> {
  const { settings, clientOptions } = siteWalkSettings(p, usage);
  return {
    settings,
    clientOptions,
    registry: await registryFrom(p, usage),
    state: str(p, 'state'),
    gzip: flag(p, 'gzip'),
    verbose: count(p, 'verbose'),
    report: new BatchReport(!flag(p, 'no-progress')),
  };
}

/**
 * The formats of the run. Without `--plugin`: the defaults, imported when a site first has a
 * document to parse (a run of 304s imports none). With it: the plugins loaded once for the
 * process, now, so that a bad module is said before any site starts.
 */
async function registryFrom(p: Parsed, usage: string): Promise<Registry | RegistryLoader> {
  if (list(p, 'plugin').length === 0) return loadDefaultRegistry;
  const { pluginsFrom } = await import('./plugins.js');
  return (await pluginsFrom(p, usage)).registry as Registry;
}

/** A many-sites command's run with its client, output and state open. */
export class OpenSiteRun {
  /** The sites that ended here, for a runner that does not count them itself (a worker). */
  readonly counter: ProgressCounter;

  constructor(
    readonly flags: SiteRunFlags,
    readonly client: ReturnType<typeof batchWebClient>,
    readonly output: RunOutput,
  ) {
    this.counter = new ProgressCounter((progress) => flags.report.update(progress));
  }

  /** What every runner takes (`batchWalk`, `runWorker`). */
  get options(): SiteRunOptions {
    return {
      webClient: this.client,
      registry: this.flags.registry,
      sink: this.output.sink,
      state: this.output.state,
      ...this.flags.settings,
    };
  }

  /** A site's line on stderr with `-v`. */
  logSite(r: SiteResult): void {
    if (this.flags.verbose > 0) this.flags.report.log(siteLine(r));
  }

  /** A site ended, counted here: the progress line, and its line with `-v`. */
  siteEnded(r: SiteResult): void {
    this.counter.ended(r);
    this.logSite(r);
  }

  /** One line on stderr, below the progress line. */
  say(line: string): void {
    this.flags.report.clear();
    process.stderr.write(`${line}\n`);
  }

  /**
   * The client's close waits on its sockets, the sink's on its files' syncs (libuv's pool), the
   * state's on SQLite's last checkpoint: the client's runs alongside the other two, so a run ends
   * after the longest of them, not their sum (no-change run of 1,000 sites: client 56-100 ms,
   * sink 18-38 ms, state 7-12 ms).
   */
  async close(options?: { readonly ended?: boolean }): Promise<void> {
    this.flags.report.clear();
    await closeBoth(this.client, this.output, options);
  }
}

async function closeBoth(
  client: { close(): Promise<void> },
  output: RunOutput | null,
  options?: { readonly ended?: boolean },
): Promise<void> {
  const clientClosed = client.close();
  clientClosed.catch(() => {});
  try {
    await output?.close(options);
  } finally {
    await clientClosed;
  }
}

/** An output or state error caused by a full file system. */
export function isFullDisk(err: Error): boolean {
  return (err.cause as NodeJS.ErrnoException | undefined)?.code === 'ENOSPC';
}

/** The run's output or state failed: one line, exit status 1. Anything else is not ours to say. */
export function stopped(err: unknown, report: BatchReport, text = (e: Error) => e.message): 1 {
  if (err instanceof StateStoreError || err instanceof OutputError) {
    report.clear();
    process.stderr.write(`usp: error: ${text(err)}\n`);
    return 1;
  }
  throw err;
}

/**
 * Opens the web client, then `--out` with `--state` (through the one resolver of `backends.ts`).
 * An output or state that cannot be opened is said in one line and gives `1` (exit status).
 * `allowPrivateOrigins`: the origins the user listed, which may be private (see `listedOrigins`).
 */
export async function openSiteRun(
  flags: SiteRunFlags,
  out: string,
  context: Omit<OutputContext, 'state' | 'gzip'>,
  usage: string,
  allowPrivateOrigins?: (origin: string) => boolean,
): Promise<OpenSiteRun | 1> {
  const clientOptions =
    allowPrivateOrigins === undefined || flags.clientOptions.allowPrivateNetworks === true
      ? flags.clientOptions
      : { ...flags.clientOptions, allowPrivateOrigins };
  const { sites, perHost } = flags.settings;
  const client = batchWebClient(clientOptions, sites, perHost);
  let output: RunOutput;
  try {
    output = await openRunOutput(
      out,
      {
        ...context,
        ...(flags.state !== undefined ? { state: flags.state } : {}),
        ...(flags.gzip ? { gzip: true } : {}),
      },
      usage,
    );
  } catch (err) {
    await closeBoth(client, null);
    return stopped(err, flags.report);
  }
  return new OpenSiteRun(flags, client, output);
}
