import {
  type ChildRef,
  parseIsoDate,
  type Revisit,
  type SitemapDate,
  type StoredDocument,
  type TreeOptions,
} from '@usp-ts/core';
import type { SiteJob, SiteJobContext } from './site-job.js';
import type { SitemapState, SiteState, StateStore, StoredChild } from './state-store.js';

/**
 * How often a site's 14 known paths are all probed again. In between, an incremental walk probes
 * only those that were sitemaps last time: on a daily run of sites with nothing new, the misses
 * would otherwise be most of the requests.
 */
export const REPROBE_EVERY_MS = 7 * 86_400_000;

export const iso = (d: SitemapDate | null): string | null => (d === null ? null : d.toSourceString());

function toChildRefs(children: readonly StoredChild[]): ChildRef[] {
  // Core's parser reads the stored `toSourceString()` back to a date that prints the same, so a
  // child replayed from a 304 compares equal to its stored `<lastmod>` and can be skipped.
  return children.map((c) => ({
    url: c.url,
    lastModified: c.lastModified === null ? null : parseIsoDate(c.lastModified),
  }));
}

function storedOf(rec: SitemapState): StoredDocument {
  return { type: rec.type, children: toChildRefs(rec.children) };
}

/**
 * What one site walk starts from: the state the last run left (its documents by the URL they
 * were requested under and by their final URL), and what this walk does with it: a full walk or
 * an incremental one, which known paths it probes, whether a probe comes first, and the walk's
 * `revisit` hooks (validators, `<lastmod>` skips, 304 replays).
 */
export class SitePlan {
  readonly site: string;
  readonly state: StateStore | null;
  /** The last run's state of the site; `null` for a site never walked (or without a state). */
  readonly prev: SiteState | null;
  /** When the walk started (ms since the epoch): the state's timestamps. */
  readonly now: number;
  /** Walk as if the state were empty (`SiteJob.full`, or `fullEveryMs` passed). */
  readonly full: boolean;
  /** Every known path is probed (the last full probe is older than `REPROBE_EVERY_MS`). */
  readonly probeAll: boolean;
  readonly #byUrl: ReadonlyMap<string, SitemapState>;
  readonly #byFinal: ReadonlyMap<string, SitemapState>;
  /** Page digests read for this walk (`loadPages`), by the document they belong to. */
  readonly #pages = new Map<SitemapState, Uint8Array | null>();

  private constructor(job: SiteJob, ctx: SiteJobContext, prev: SiteState | null, now: number) {
    this.site = job.site;
    this.state = ctx.state ?? null;
    this.prev = prev;
    this.now = now;
    this.full =
      job.full === true ||
      (prev !== null && ctx.fullEveryMs !== undefined && now - prev.fullWalkAt >= ctx.fullEveryMs);
    this.probeAll = prev === null || this.full || now - prev.probedAt >= REPROBE_EVERY_MS;
    this.#byUrl = new Map((prev?.sitemaps ?? []).map((s) => [s.url, s]));
    this.#byFinal = new Map((prev?.sitemaps ?? []).map((s) => [s.finalUrl, s]));
  }

  /** Reads the site's state (without its page digests) and plans the walk. */
  static async load(job: SiteJob, ctx: SiteJobContext, now: number): Promise<SitePlan> {
    const prev = ctx.state == null ? null : await ctx.state.loadSite(job.site);
    return new SitePlan(job, ctx, prev, now);
  }

  /**
   * The site gave no answer on its previous run: one probe first, the walk only if it answers
   * (not on a full walk). A daily run would otherwise spend the full timeouts and retries on a
   * dead host every day.
   */
  get probeFirst(): boolean {
    return this.state !== null && this.prev?.unreachable != null && !this.full;
  }

  /** The last run's state of the document requested as `url`. */
  previous(url: string): SitemapState | null {
    return this.#byUrl.get(url) ?? null;
  }

  /** The last run's page digest of the document read at `finalUrl` (see `loadPages`). */
  previousPages(finalUrl: string): { pages: Uint8Array | null; pageCount: number } | null {
    const rec = this.#byFinal.get(finalUrl);
    if (rec === undefined) return null;
    return {
      pages: rec.pages !== undefined ? rec.pages : (this.#pages.get(rec) ?? null),
      pageCount: rec.pageCount,
    };
  }

  /**
   * Reads the last run's page digest of the document about to be parsed at `finalUrl` (the walk's
   * `beforeParse`): only documents read again need theirs, and before their body is parsed,
   * since the page writer marks pages as they come.
   */
  async loadPages(finalUrl: string): Promise<void> {
    const rec = this.#byFinal.get(finalUrl);
    if (this.state === null || rec === undefined || rec.pages !== undefined || this.#pages.has(rec)) return;
    this.#pages.set(rec, await this.state.loadPages(this.site, rec.url));
  }

  /** The walk's incremental hooks; none for a site never walked or a full walk. */
  revisit(): Revisit | undefined {
    if (this.prev === null || this.full) return undefined;
    const honest = this.prev.lastmodTrust > 0;
    const byUrl = this.#byUrl;
    return {
      plan(url, indexLastmod) {
        const rec = byUrl.get(url);
        if (rec === undefined) return undefined;
        const lm = iso(indexLastmod);
        if (honest && !rec.news && rec.indexLastmod !== null && lm === rec.indexLastmod) {
          return { reuse: storedOf(rec) };
        }
        const validators: { ifNoneMatch?: string; ifModifiedSince?: string } = {};
        if (rec.etag !== null) validators.ifNoneMatch = rec.etag;
        if (rec.lastModified !== null) validators.ifModifiedSince = rec.lastModified;
        return validators;
      },
      notModified(url) {
        const rec = byUrl.get(url);
        return rec === undefined ? undefined : storedOf(rec);
      },
    };
  }

  /**
   * Known-path options that probe only the top-level sitemaps the last walk found (not those
   * robots.txt named); `null` when every known path is probed.
   */
  knownPaths(extra: readonly string[]): Pick<TreeOptions, 'knownPaths' | 'extraKnownPaths'> | null {
    const prev = this.prev;
    if (this.probeAll || prev === null) return null;
    const listed = new Set<string>();
    for (const s of prev.sitemaps) for (const c of s.children) listed.add(c.url);
    const found = prev.sitemaps
      .filter((s) => s.type !== 'IndexRobotsTxtSitemap' && !listed.has(s.url))
      .map((s) => s.url);
    return { knownPaths: [], extraKnownPaths: [...extra, ...found] };
  }
}
