import { type StoredDocumentType, UspError } from '@usp-ts/core';

// The state port: what a batch keeps about each site between runs. It lives here, with the
// policy that reads and writes it (the site job); core's walk knows only `Revisit`, the hooks
// the job builds from it. A new backend implements `StateStore` and runs the suite of
// `@usp-ts/testkit/state-store`.

/** Why a state store cannot be used: another run holds it, it is not a state, or I/O failed. */
export type StateStoreProblem = 'locked' | 'corrupt' | 'io';

/**
 * A state store that cannot be opened or written (code `USP_STATE`). Stores never delete or
 * rewrite what they cannot read: the message says what to do.
 */
export class StateStoreError extends UspError {
  readonly problem: StateStoreProblem;
  readonly path: string | null;
  constructor(problem: StateStoreProblem, message: string, options?: { cause?: unknown; path?: string }) {
    super('USP_STATE', message, options);
    this.name = 'StateStoreError';
    this.problem = problem;
    this.path = options?.path ?? null;
  }
}

/** A child as robots.txt or an index listed it; `lastModified` is its `<lastmod>` as ISO text. */
export interface StoredChild {
  readonly url: string;
  readonly lastModified: string | null;
}

/**
 * What a walk keeps about one sitemap document, keyed by the URL it was requested under. Plain
 * data (JSON-safe except `pages`), so any store can hold it.
 */
export interface SitemapState {
  /** The URL requested (the key). */
  readonly url: string;
  /** The URL after redirects. */
  readonly finalUrl: string;
  readonly type: StoredDocumentType;
  /** Validators the server sent with the last full answer. */
  readonly etag: string | null;
  readonly lastModified: string | null;
  /** The `<lastmod>` the parent index gave it the last time (ISO), `null` when none. */
  readonly indexLastmod: string | null;
  /** SHA-256 (hex) of the decoded body, `null` when the body was not read to its end. */
  readonly bodySha256: string | null;
  /** robots.txt and indexes: the children listed, in order. */
  readonly children: readonly StoredChild[];
  /** Pages sitemaps: how many pages were read. */
  readonly pageCount: number;
  /**
   * Pages sitemaps: 16 bytes a page (8 of a hash of its URL, 8 of a hash of its whole row), to
   * tell new, changed and unchanged pages apart; `null` for none (indexes). Loaded on demand:
   * `loadSite` leaves it out, and a walk reads it with `loadPages` only for a document it reads
   * again (a run where nothing changed reads none). Given to `saveSite`: the new digest, `null`
   * to drop the stored one, or left out to keep what the store holds for this URL (a 304 or a
   * skip). A store that reads an older layout may still give it here; take it when present.
   */
  readonly pages?: Uint8Array | null;
  /** The document held Google News pages: never skipped by `<lastmod>` (news sitemaps roll over). */
  readonly news: boolean;
  /** robots.txt: the `Crawl-delay` for `*`, in ms, `null` when none. */
  readonly crawlDelayMs: number | null;
  /** When it was last read in full (ms since the epoch). */
  readonly fetchedAt: number;
}

/** Everything kept about one site. */
export interface SiteState {
  /** The normalised homepage URL (the key). */
  readonly site: string;
  /** When a walk of the site last ended (ms since the epoch). */
  readonly walkedAt: number;
  /** When the last walk without conditional requests or skips ended (`fullEvery`). */
  readonly fullWalkAt: number;
  /**
   * When the known paths were last all probed. In between, a walk probes only those that were
   * sitemaps then (re-probing 14 paths of every site every day costs more than the sitemaps).
   */
  readonly probedAt: number;
  /**
   * Evidence that the site's index `<lastmod>` values are honest: the number of children whose
   * `<lastmod>` and body changed together, or -1 once one moved without the other (never trusted
   * again). Children are skipped by `<lastmod>` only when it is above 0.
   */
  readonly lastmodTrust: number;
  /**
   * Set when the last walk got no HTTP answer at all (timeouts, refused or reset connections):
   * the next incremental walk first sends one short probe and walks the site only if it answers.
   * `null` after a walk that got an answer.
   */
  readonly unreachable: UnreachableMark | null;
  readonly sitemaps: readonly SitemapState[];
}

/** A site that gave no answer (`SiteState.unreachable`). */
export interface UnreachableMark {
  /** When the last walk or probe without an answer ended (ms since the epoch). */
  readonly at: number;
  /** When the first of the runs in a row without an answer ended. */
  readonly since: number;
  /** Why, as that walk or probe said (`url: message`). */
  readonly reason: string;
}

/** Where the output of a committed site ended: lets a resumed run tell what was kept. */
export interface RunMark {
  readonly runId: string;
  readonly site: string;
  /** Output positions after this site's lines (the sink's own units, e.g. file sizes). */
  readonly offsets: Readonly<Record<string, number>>;
}

/**
 * The state a batch keeps between runs. Every method may be called concurrently for different
 * sites; `saveSite` is atomic (a crash leaves the old state or the new, never a mix) and stores
 * the mark in the same transaction, so that a resumed run can match the state to its output.
 * Implementations: `memoryStateStore()` in `@usp-ts/batch`, `sqliteStateStore(path)` in
 * `@usp-ts/state-sqlite`, `redisStateStore` in `@usp-ts/queue-bullmq`; `openStateStore(spec)`
 * picks one from a spec. Every one passes `stateStoreSuite` of `@usp-ts/testkit/state-store`.
 */
export interface StateStore {
  /** The site's state, `null` for a site never saved; without the page digests (`loadPages`). */
  loadSite(site: string): Promise<SiteState | null>;
  /**
   * The stored page digest of one sitemap of the site (`SitemapState.pages`, by the URL it was
   * requested under), `null` when none is stored. A copy: editing it changes nothing stored.
   */
  loadPages(site: string, url: string): Promise<Uint8Array | null>;
  /**
   * The sites whose last walk got no answer (`SiteState.unreachable` set). Optional: a batch
   * with a store that has it starts those sites before the others near them in its list (their
   * one probe waits longest, and it should not be what a run ends on).
   */
  unreachableSites?(): Promise<ReadonlySet<string>>;
  /**
   * A hint, optional: `loadSite` will soon be called for these sites (a batch's next lines). A
   * store across a network may read their states together now, one request for all; `loadSite`
   * must still give what a read of its own would give: a save through this store after the hint
   * is seen. Never throws (a failed read ahead is `loadSite`'s to read again and report).
   */
  willLoad?(sites: readonly string[]): void;
  /** Replaces the site's state (and records `mark`, when given) in one transaction. */
  saveSite(state: SiteState, mark?: RunMark): Promise<void>;
  /** The mark of the last site saved in `runId`, `null` when none. */
  lastMark(runId: string): Promise<RunMark | null>;
  /** Releases the store (closes files and locks). Safe to call twice. */
  close(): Promise<void>;
}
