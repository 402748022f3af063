import {
  InvalidOptionError,
  type RunMark,
  rejectUnknownOptions,
  type SitemapState,
  type SiteState,
  type StateStore,
  UspError,
} from '@usp-ts/core';
import { ioredis } from './cjs-deps.js';
import { checkConnection, type RedisConnection } from './connection.js';

/** Options of `redisStateStore`. */
export interface RedisStateStoreOptions {
  /** A `redis://` URL, or an ioredis client the caller owns (duplicated, never closed by the store). */
  readonly connection: RedisConnection;
  /** Prefix of every key. Default `usp:state:`. */
  readonly prefix?: string;
}

const OPTION_KEYS = { connection: true, prefix: true } satisfies Record<keyof RedisStateStoreOptions, true>;

/**
 * A site's value: its state without the page digests, which live in a hash of their own (one
 * field a sitemap) so that a run where nothing changed reads and writes none of them. A value
 * written before that layout still holds them as base64 (`pages` text): they are read from there
 * and move to the hash at the site's next save.
 */
type StoredSitemap = Omit<SitemapState, 'pages'> & { readonly pages?: string | null };

function encode(state: SiteState): string {
  return JSON.stringify({ ...state, sitemaps: state.sitemaps.map(({ pages: _, ...s }): StoredSitemap => s) });
}

function decode(text: string): SiteState {
  const stored = JSON.parse(text) as Omit<SiteState, 'sitemaps' | 'unreachable'> & {
    sitemaps: StoredSitemap[];
    unreachable?: SiteState['unreachable'];
  };
  return {
    ...stored,
    unreachable: stored.unreachable ?? null,
    sitemaps: stored.sitemaps.map(({ pages, ...s }): SitemapState => {
      if (pages === undefined) return s;
      return { ...s, pages: pages === null ? null : new Uint8Array(Buffer.from(pages, 'base64')) };
    }),
  };
}

/**
 * The batch's incremental state in Redis, shared by every worker: one key per site (its state,
 * the same one a single-machine run keeps in SQLite), one hash per site of its page digests, and
 * one hash of run marks. A site is walked by one worker at a time (the queue sees to that), so
 * each save replaces the site's value and digests in one `MULTI` with its mark: a worker killed
 * mid-save leaves the old state or the new.
 *
 * Cost per site and run: one GET before the walk, one HKEYS and one MULTI after, and one HGET
 * per sitemap read again (its page digest). Size: about the SQLite store's; run Redis with
 * persistence (`appendonly yes`) so a restart keeps it.
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
    typeof connection === 'string'
      ? new ioredis.Redis(connection, redisOptions)
      : connection.duplicate(redisOptions);
  // The restart is waited out (above) and reported by the run's own connections, once: without a
  // listener, ioredis printed a stack for each reconnect attempt.
  client.on('error', () => {});
  const siteKey = (site: string) => `${prefix}site:${site}`;
  const pagesKey = (site: string) => `${prefix}pages:${site}`;
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
    async loadPages(site, url) {
      open();
      const pages = await client.hgetBuffer(pagesKey(site), url);
      return pages === null ? null : new Uint8Array(pages);
    },
    async saveSite(state, mark) {
      open();
      const key = pagesKey(state.site);
      // One worker walks a site at a time (the queue sees to that): the fields read here are
      // still the site's when the MULTI runs.
      const listed = new Set(state.sitemaps.map((s) => s.url));
      const gone = (await client.hkeys(key)).filter((url) => !listed.has(url));
      const tx = client.multi().set(siteKey(state.site), encode(state));
      for (const s of state.sitemaps) {
        if (s.pages === null) gone.push(s.url);
        else if (s.pages !== undefined) {
          tx.hset(key, s.url, Buffer.from(s.pages.buffer, s.pages.byteOffset, s.pages.byteLength));
        }
      }
      if (gone.length > 0) tx.hdel(key, ...gone);
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
