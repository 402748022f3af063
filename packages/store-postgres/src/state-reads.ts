import type pg from 'pg';
import { quote, textArray } from './sql-text.js';

/** A stored version of a site's state, as `state_sites` holds it (the JSON columns parsed). */
export interface SiteRow {
  run_id: string;
  walked_at: string;
  full_walk_at: string;
  probed_at: string;
  lastmod_trust: number;
  unreachable: unknown;
  sitemaps: unknown;
}

/** A version read ahead: the JSON columns as text, parsed only for the version a walk uses. */
type TextRow = SiteRow & { site: string; unreachable: string | null; sitemaps: string };

/** A site's versions read ahead, newest first, and whether a save may have changed them since. */
interface Ahead {
  readonly versions: Promise<TextRow[] | null>;
  stale: boolean;
}

/** More sites read ahead and not yet walked than this and the oldest are dropped (a stopped run). */
const MAX_AHEAD = 4_096;

const COLUMNS = 'run_id, walked_at, full_walk_at, probed_at, lastmod_trust';

/**
 * The reads of sites' states. A site's state is its latest version, or the latest of a run other
 * than the one it is walked in (`notOf`). `ahead(sites)` reads the two latest versions of several
 * sites in one statement (a store keeps two a site: whichever `notOf` says, the one wanted is
 * among them); `read` then takes a site's from there, unless a save of that site went through
 * this store after the statement was sent (`saved`): then it reads again, so that what a walk
 * read, and its commit saves against, is never older than its own store's last save. A site
 * being walked or saved (`busy`) is not read ahead, since such a save may land after the read.
 */
export class StateReads {
  readonly #pool: pg.Pool;
  /** Sites whose state may be changing through this store (walked, or being saved). */
  readonly #busy: (site: string) => boolean;
  readonly #ahead = new Map<string, Ahead>();

  constructor(pool: pg.Pool, busy: (site: string) => boolean) {
    this.#pool = pool;
    this.#busy = busy;
  }

  /** Reads the states of `sites` now, in one statement; a failure is left to `read`. */
  ahead(sites: readonly string[]): void {
    const wanted = sites.filter((site) => !this.#ahead.has(site) && !this.#busy(site));
    if (wanted.length === 0) return;
    const all = this.#pool
      .query(
        `SELECT site, ${COLUMNS}, unreachable::text AS unreachable, sitemaps::text AS sitemaps FROM (
           SELECT *, row_number() OVER (PARTITION BY site ORDER BY seq DESC) AS n
           FROM state_sites WHERE site = ANY(${textArray(wanted)})) v
         WHERE n <= 2 ORDER BY site, seq DESC`,
      )
      .then((r) => {
        const bySite = new Map<string, TextRow[]>();
        for (const row of r.rows as TextRow[]) {
          const versions = bySite.get(row.site);
          if (versions === undefined) bySite.set(row.site, [row]);
          else versions.push(row);
        }
        return bySite;
      })
      .catch(() => null);
    for (const site of wanted) {
      if (this.#ahead.size >= MAX_AHEAD) this.#ahead.delete(this.#ahead.keys().next().value as string);
      this.#ahead.set(site, {
        versions: all.then((m) => (m === null ? null : (m.get(site) ?? []))),
        stale: false,
      });
    }
  }

  /** A save of `site` is on its way: what was read ahead of it may be older. */
  saved(site: string): void {
    const ahead = this.#ahead.get(site);
    if (ahead !== undefined) ahead.stale = true;
  }

  /** The latest version of a site's state, or the latest of a run other than `notOf`. */
  async read(q: pg.ClientBase | pg.Pool, site: string, notOf: string | undefined): Promise<SiteRow | null> {
    const ahead = this.#ahead.get(site);
    if (ahead !== undefined) {
      const versions = await ahead.versions;
      if (this.#ahead.get(site) === ahead) this.#ahead.delete(site);
      if (versions !== null && !ahead.stale) {
        const row = versions.find((v) => v.run_id !== notOf);
        if (row === undefined) return null;
        return {
          ...row,
          unreachable: row.unreachable === null ? null : JSON.parse(row.unreachable),
          sitemaps: JSON.parse(row.sitemaps),
        };
      }
    }
    // Literals, not parameters: one message to write instead of five (each site reads once).
    const r = await q.query(
      `SELECT ${COLUMNS}, unreachable, sitemaps FROM state_sites
       WHERE site = ${quote(site)} ${notOf !== undefined ? `AND run_id <> ${quote(notOf)}` : ''} ORDER BY seq DESC LIMIT 1`,
    );
    return (r.rows[0] as SiteRow | undefined) ?? null;
  }
}
