import type { SiteCopy } from './queue-port.js';
import type { PageRow, SitemapRow, SiteResult } from './rows.js';
import type { RunMark, StateStore } from './state-store.js';

// The site-sink port: where a batch's rows go. A new result store (files, a database) implements
// `SiteSink` and runs `siteSinkSuite` of `@usp-ts/testkit/site-sink`; `openSiteSink(spec)` picks
// one from a spec (`--out`).

/**
 * Where a run's rows go, one site at a time. Each site's rows are held by its `SiteOutput` until
 * its walk ends and are then kept all together, or not at all: that is what lets a resumed run
 * (or a queue's second try of a site) write each site once. `openNdjsonSink` writes files,
 * `memorySink` keeps arrays.
 */
export interface SiteSink {
  /** Starts one site's output. Nothing of it is kept before `commit`. */
  begin(site: string, options?: BeginOptions): SiteOutput;
  /**
   * The state store whose saves this sink makes part of its commits, when it has one (a database
   * keeping a site's rows and its next state in one transaction: `openPostgresStore`,
   * `openSqliteStore`). A runner whose state is this one hands `saveState` to the commit, so rows
   * and state are kept together or not at all; with any other state (files beside a Redis state),
   * a queue worker saves the state after the rows are kept.
   */
  readonly ownState?: StateStore;
  /**
   * Sites (and invalid input lines) committed by an earlier part of this run, when the sink was
   * opened to resume one: a runner neither walks nor reports them again. Empty or absent otherwise.
   */
  readonly done?: ReadonlySet<string>;
  /** Makes what was committed durable and releases the store. Safe to call twice. */
  close?(): Promise<void>;
}

/** How a site's output begins (`SiteSink.begin`). */
export interface BeginOptions {
  /**
   * The run the site's rows belong to, when the runner's run is not the sink's: a queue's run,
   * named by its producer, shared by every worker on any machine. A store that keeps rows by run
   * files them (and reads the state they are compared with) under it; a later copy of the site in
   * the same run replaces the earlier one. Default: the sink's own run. Sinks with one run per
   * output (files) ignore it.
   */
  readonly run?: string;
}

/** What a commit does besides keeping the rows. */
export interface CommitOptions {
  /**
   * Saves the site's next state. Called once, after the rows are written and before the commit is
   * final, with the mark that ties the state to this output: a crash in between leaves a state
   * that a resumed run recognises (see `StateStore.lastMark`). A sink that keeps the state in the
   * same transaction as the rows may call it inside that transaction. When it rejects, the commit
   * rejects (with its error, or the sink's own error saying it) and none of the site's rows count
   * as kept.
   */
  readonly saveState?: (mark: RunMark) => Promise<void>;
  /**
   * A queue's check that this try still owns the site (fencing a stale copy). Called once, before
   * anything becomes visible: it resolves with this copy's name and the copies it replaces, or
   * rejects when another try owns the site now; then the sink keeps nothing and the commit rejects
   * with that error. Without it, the commit is the site's only copy.
   */
  readonly fence?: () => Promise<SiteCopy>;
}

/** One site's output, from `SiteSink.begin`. */
export interface SiteOutput {
  /**
   * One page row. `json`, when given, is `JSON.stringify(row)`, made by the caller as it read the
   * page; a sink that writes JSON may use it instead of serialising the row again.
   */
  page(row: PageRow, json?: string): void;
  /**
   * One page row as its JSON text alone: `JSON.stringify(row)` of a `PageRow`, keys in the row's
   * order, no newline. Optional: a sink that keeps rows as text (files, a database reading JSON)
   * declares it, and the runner then hands it the rows it holds as text this way instead of
   * parsing them back into objects for `page` (a run after a few pages were removed releases
   * nearly every page of every sitemap so). A sink without it gets every row through `page`.
   */
  pageLine?(json: string): void;
  /**
   * Page rows as UTF-8 lines, each `JSON.stringify(row)` of a `PageRow` ended by `'\n'`, `rows`
   * of them: what `pageLine` would get one by one, in order. Optional, for a sink that declares
   * `pageLine` and takes rows in bulk; the runner then hands it the rows it held back this way
   * (unchanged pages before a document's first change) without splitting them into strings.
   */
  pageLines?(text: Buffer, rows: number): void;
  sitemap(row: SitemapRow): void;
  /**
   * Keeps the site's rows and its result row, all or nothing, then the state (`saveState`).
   * Rejects when the output or the state cannot be written (the run's failure, not the site's)
   * or when the fence refuses the copy. Called at most once; `discard` is not called after it.
   */
  commit(result: SiteResult, options?: CommitOptions): Promise<void>;
  /** Drops the rows held (an interrupted walk is walked again). */
  discard(): void;
}
