import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';

/** How a farm site is built. */
export type FarmSiteKind =
  /** robots.txt + one urlset. */
  | 'urlset'
  /** robots.txt + an index (with `<lastmod>`) of several urlsets. */
  | 'index'
  /** No robots.txt: the urlset is found at /sitemap.xml, gzipped at /sitemap.xml.gz. */
  | 'gzip'
  /** Every path answers 404. */
  | 'dead'
  /** Accepts connections and never answers. */
  | 'hang'
  /** Nothing listens: connections are refused. */
  | 'refuse';

export interface FarmOptions {
  /** Number of sites (default 50). */
  readonly sites?: number;
  /** Seed of the generator (default 1). */
  readonly seed?: number;
  /** Pages of a plain urlset: from, to (default 50, 500). */
  readonly pages?: readonly [number, number];
  /** Sites with 50,000 URLs (default 0). */
  readonly bigSites?: number;
  /** Second octet of the loopback addresses (default 77: 127.77.x.y). */
  readonly octet?: number;
  /** Hold each answer this long (ms; default 0), to make concurrency visible. */
  readonly delayMs?: number;
}

interface Doc {
  body: string;
  gzip: boolean;
  etag: string;
}

/** One site of the farm; `homepage` is what a sites file lists. */
export interface FarmSite {
  readonly kind: FarmSiteKind;
  readonly homepage: string;
  readonly host: string;
  /** path → document. */
  readonly docs: Map<string, Doc>;
  /** Urlset paths with their page URLs and lastmods (the generator's ground truth). */
  readonly urlsets: Map<string, Map<string, string>>;
  /** Index path → child path → lastmod (for `index` sites). */
  readonly index: Map<string, string> | null;
  requests: number;
  /** TCP connections the site accepted. */
  connections: number;
  inFlight: number;
  maxInFlight: number;
  bytesSent: number;
}

/** What a change of the farm did: the page URLs a changes-only consumer must see. */
export interface FarmChange {
  readonly changedSitemaps: string[];
  /** Pages whose lastmod moved. */
  readonly changedPages: Set<string>;
  /** Pages added. */
  readonly newPages: Set<string>;
}

export interface SiteFarm {
  readonly sites: FarmSite[];
  /** The sites file: one homepage a line. */
  sitesFile(): string;
  /** Every page URL of the farm now (the ground truth of a full walk). */
  allPages(): Set<string>;
  /** Changes `fraction` of the urlsets (a page's lastmod moves, a page is added; indexes follow). */
  change(fraction: number, seed?: number): FarmChange;
  /**
   * Removes about `fraction` of the pages of the sites that answer, each page drawn on its own
   * (the sitemaps that lose one are published again, and their index `<lastmod>` moves). Returns
   * the page URLs removed: what a run after it must report as `removed`.
   */
  remove(fraction: number, seed?: number): Set<string>;
  /** Totals over the sites. */
  totals(): { requests: number; connections: number; bytesSent: number; maxInFlightPerHost: number };
  resetCounters(): void;
  close(): Promise<void>;
}

/** mulberry32: small, seeded, good enough to pick a mix (the bench's generator uses it too). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function etagOf(body: string): string {
  return `"${createHash('sha1').update(body).digest('hex').slice(0, 16)}"`;
}

function urlsetXml(pages: Map<string, string>): string {
  let s =
    '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n';
  for (const [loc, lastmod] of pages) s += `<url><loc>${loc}</loc><lastmod>${lastmod}</lastmod></url>\n`;
  return `${s}</urlset>\n`;
}

function indexXml(home: string, children: Map<string, string>): string {
  let s =
    '<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n';
  for (const [path, lastmod] of children)
    s += `<sitemap><loc>${home}${path.slice(1)}</loc><lastmod>${lastmod}</lastmod></sitemap>\n`;
  return `${s}</sitemapindex>\n`;
}

/** The kind of site i of n, spread like the web: mostly small urlsets, some indexes, a few failures. */
function kindOf(i: number, rnd: () => number, big: boolean): FarmSiteKind {
  if (big) return 'index';
  if (i === 3) return 'hang';
  if (i === 5) return 'refuse';
  const r = rnd();
  if (r < 0.04) return 'dead';
  if (r < 0.12) return 'gzip';
  if (r < 0.3) return 'index';
  return 'urlset';
}

/**
 * Starts a farm of sites, each on its own loopback address (127.O.x.y, one listener each) so that
 * hosts really differ, built like the web: most with robots.txt and a urlset of 50-500 URLs, some
 * with an index of several urlsets, some gzipped, some 404 everywhere, one that accepts and never
 * answers, one that refuses. Documents carry ETags and answer If-None-Match with 304. Each site
 * counts its requests, bytes and the most requests it had in flight at once.
 */
export async function startSiteFarm(options: FarmOptions = {}): Promise<SiteFarm> {
  const n = options.sites ?? 50;
  const rnd = seededRandom(options.seed ?? 1);
  const [minPages, maxPages] = options.pages ?? [50, 500];
  const octet = options.octet ?? 77;
  const delayMs = options.delayMs ?? 0;
  const bigCount = options.bigSites ?? 0;
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  const sites: FarmSite[] = [];
  const day = (d: number) => new Date(Date.UTC(2026, 0, 1) + d * 86_400_000).toISOString().slice(0, 10);

  const setDoc = (site: FarmSite, path: string, body: string, gzip = false): void => {
    site.docs.set(path, { body, gzip, etag: etagOf(body) });
  };
  const publish = (site: FarmSite): void => {
    for (const [path, pages] of site.urlsets) setDoc(site, path, urlsetXml(pages), path.endsWith('.gz'));
    if (site.index !== null) setDoc(site, '/sitemap_index.xml', indexXml(site.homepage, site.index));
  };

  for (let i = 0; i < n; i++) {
    const host = `127.${octet}.${Math.floor(i / 250)}.${(i % 250) + 1}`;
    const big = i >= n - bigCount;
    const kind = kindOf(i, rnd, big);
    const site: FarmSite = {
      kind,
      host,
      homepage: '',
      docs: new Map(),
      urlsets: new Map(),
      index: null,
      requests: 0,
      connections: 0,
      inFlight: 0,
      maxInFlight: 0,
      bytesSent: 0,
    };
    if (kind === 'refuse') {
      (site as { homepage: string }).homepage = `http://${host}:9/`;
      sites.push(site);
      continue;
    }
    const server = createServer((req, res) => {
      site.requests++;
      if (site.kind === 'hang') return;
      site.inFlight++;
      site.maxInFlight = Math.max(site.maxInFlight, site.inFlight);
      const answer = () => {
        site.inFlight--;
        const path = (req.url ?? '/').split('?')[0];
        const doc = site.docs.get(path);
        if (doc === undefined || site.kind === 'dead') {
          res.writeHead(404, { 'content-type': 'text/html' });
          res.end('<html><body>Not found</body></html>');
          return;
        }
        const headers: Record<string, string> = {
          'content-type': path.endsWith('.txt')
            ? 'text/plain'
            : path.endsWith('.gz')
              ? 'application/gzip'
              : 'application/xml',
          etag: doc.etag,
        };
        if (req.headers['if-none-match'] === doc.etag) {
          res.writeHead(304, headers);
          res.end();
          return;
        }
        const bytes = doc.gzip ? gzipSync(doc.body) : Buffer.from(doc.body);
        site.bytesSent += bytes.length;
        res.writeHead(200, headers);
        res.end(bytes);
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
    server.on('connection', (s: Socket) => {
      site.connections++;
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, resolve);
    });
    servers.push(server);
    const port = (server.address() as AddressInfo).port;
    const home = `http://${host}:${port}/`;
    (site as { homepage: string }).homepage = home;
    const pagesFor = (count: number, prefix: string): Map<string, string> => {
      const m = new Map<string, string>();
      for (let p = 0; p < count; p++) m.set(`${home}${prefix}/${p}.html`, day(Math.floor(rnd() * 300)));
      return m;
    };
    const count = () => minPages + Math.floor(rnd() * (maxPages - minPages + 1));
    if (kind === 'urlset') {
      site.urlsets.set('/sitemap.xml', pagesFor(count(), 'a'));
      setDoc(site, '/robots.txt', `User-agent: *\nDisallow: /private/\nSitemap: ${home}sitemap.xml\n`);
    } else if (kind === 'gzip') {
      site.urlsets.set('/sitemap.xml.gz', pagesFor(count(), 'g'));
    } else if (kind === 'index') {
      const children = big ? 1 : 2 + Math.floor(rnd() * 4);
      const index = new Map<string, string>();
      for (let c = 0; c < children; c++) {
        const path = `/sitemap-${c}.xml`;
        site.urlsets.set(path, pagesFor(big ? 50_000 : count(), `s${c}`));
        index.set(path, `${day(300 + c)}T00:00:00Z`);
      }
      (site as { index: Map<string, string> | null }).index = index;
      setDoc(site, '/robots.txt', `User-agent: *\nSitemap: ${home}sitemap_index.xml\n`);
    }
    publish(site);
    sites.push(site);
  }

  return {
    sites,
    sitesFile: () => `${sites.map((s) => s.homepage).join('\n')}\n`,
    allPages() {
      const all = new Set<string>();
      for (const s of sites) {
        if (s.kind === 'dead' || s.kind === 'hang' || s.kind === 'refuse') continue;
        for (const pages of s.urlsets.values()) for (const u of pages.keys()) all.add(u);
      }
      return all;
    },
    change(fraction, seed = 2) {
      const pick = seededRandom(seed);
      const changedSitemaps: string[] = [];
      const changedPages = new Set<string>();
      const newPages = new Set<string>();
      for (const s of sites) {
        if (s.kind === 'dead' || s.kind === 'hang' || s.kind === 'refuse') continue;
        let touched = false;
        for (const [path, pages] of s.urlsets) {
          if (pick() >= fraction) continue;
          touched = true;
          changedSitemaps.push(`${s.homepage}${path.slice(1)}`);
          const urls = [...pages.keys()];
          const moved = urls[Math.floor(pick() * urls.length)];
          pages.set(moved, '2026-12-01');
          changedPages.add(moved);
          const added = `${s.homepage}new/${path.slice(1)}/${pages.size}.html`;
          pages.set(added, '2026-12-01');
          newPages.add(added);
          if (s.index !== null) s.index.set(path, '2026-12-01T00:00:00Z');
        }
        if (touched) publish(s);
      }
      return { changedSitemaps, changedPages, newPages };
    },
    remove(fraction, seed = 3) {
      const pick = seededRandom(seed);
      const removed = new Set<string>();
      for (const s of sites) {
        if (s.kind === 'dead' || s.kind === 'hang' || s.kind === 'refuse') continue;
        let touched = false;
        for (const [path, pages] of s.urlsets) {
          const gone = [...pages.keys()].filter(() => pick() < fraction);
          if (gone.length === 0) continue;
          touched = true;
          for (const url of gone) {
            pages.delete(url);
            removed.add(url);
          }
          if (s.index !== null) s.index.set(path, '2026-12-02T00:00:00Z');
        }
        if (touched) publish(s);
      }
      return removed;
    },
    totals() {
      let requests = 0;
      let connections = 0;
      let bytesSent = 0;
      let maxInFlightPerHost = 0;
      for (const s of sites) {
        requests += s.requests;
        connections += s.connections;
        bytesSent += s.bytesSent;
        maxInFlightPerHost = Math.max(maxInFlightPerHost, s.maxInFlight);
      }
      return { requests, connections, bytesSent, maxInFlightPerHost };
    },
    resetCounters() {
      for (const s of sites) {
        s.requests = 0;
        s.connections = 0;
        s.bytesSent = 0;
        s.maxInFlight = 0;
      }
    },
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    },
  };
}
