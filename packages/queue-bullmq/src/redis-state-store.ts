import {
  InvalidOptionError,
  type RunMark,
  rejectUnknownOptions,
  type SitemapState,
  type SiteState,
  type StateStore,
  UspError,
} from '@usp-ts/core';
import { Redis } from 'ioredis';
import { checkConnection, type RedisConnection } from './connection.js';

/** Options of `redisStateStore`. */
export interface RedisStateStoreOptions {
  /** A `redis://` URL, or an ioredis client the caller owns (duplicated, never closed by the store). */
  readonly connection: RedisConnection;
  /** Prefix of every key. Default `usp:state:`. */
  readonly prefix?: string;
}

const OPTION_KEYS = { connection: true, prefix: true } satisfies Record<keyof RedisStateStoreOptions, true>;

/** A sitemap's state as stored: `pages` (binary) as base64 text, everything else as it is. */
type StoredSitemap = Omit<SitemapState, 'pages'> & { readonly pages: string | null };

function encode(state: SiteState): string {
  return JSON.stringify({
    ...state,
    sitemaps: state.sitemaps.map(
      (s): StoredSitemap => ({
        ...s,
        pages:
          s.pages === null
            ? null
            : Buffer.from(s.pages.buffer, s.pages.byteOffset, s.pages.byteLength).toString('base64'),
      }),
    ),
  });
}

function decode(text: string): SiteState {
  const stored = JSON.parse(text) as Omit<SiteState, 'sitemaps'> & { sitemaps: StoredSitemap[] };
  return {
    ...stored,
    sitemaps: stored.sitemaps.map(
      (s): SitemapState => ({
        ...s,
        pages: s.pages === null ? null : new Uint8Array(Buffer.from(s.pages, 'base64')),
      }),
    ),
  };
}

/**
 * The batch's incremental state in Redis, shared by every worker: one key per site (its whole
 * state, the same one a single-machine run keeps in SQLite), and one hash of run marks. A site is
 * walked by one worker at a time (the queue sees to that), so each save replaces the site's value
 * in one `MULTI` with its mark: a worker killed mid-save leaves the old state or the new.
 *
 * Cost per site and run: one GET before the walk, one SET after. Size: about the SQLite store's,
 * plus a third for the base64 of the page digests (16 bytes a page); run Redis with persistence
 * (`appendonly yes`) so a restart keeps it.
 */
export function redisStateStore(options: RedisStateStoreOptions): StateStore {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionError('options', 'expected an object');
  rejectUnknownOptions(options, OPTION_KEYS);
  const connection = checkConnection(options.connection);
  const prefix = options.prefix ?? 'usp:state:';
  if (typeof prefix !== 'string') throw new InvalidOptionError('prefix', 'expected a string');
  // Commands wait out a Redis restart (queued by ioredis) rather than fail the site.
  const redisOptions = { maxRetriesPerRequest: null } as const;
  const client =
    typeof connection === 'string' ? new Redis(connection, redisOptions) : connection.duplicate(redisOptions);
  const siteKey = (site: string) => `${prefix}site:${site}`;
  const marksKey = `${prefix}marks`;
  let closed = false;
  const open = () => {
    if (closed) throw new UspError('USP_CLOSED', 'redisStateStore: used after close()');
  };

  return {
    async loadSite(site) {
      open();
      const text = await client.get(siteKey(site));
      return text === null ? null : decode(text);
    },
    async saveSite(state, mark) {
      open();
      const tx = client.multi().set(siteKey(state.site), encode(state));
      if (mark !== undefined) tx.hset(marksKey, mark.runId, JSON.stringify(mark));
      const replies = await tx.exec();
      for (const [error] of replies ?? []) if (error) throw error;
    },
    async lastMark(runId) {
      open();
      const text = await client.hget(marksKey, runId);
      return text === null ? null : (JSON.parse(text) as RunMark);
    },
    async close() {
      if (closed) return;
      closed = true;
      await client.quit().catch(() => client.disconnect());
    },
  };
}
