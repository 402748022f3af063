import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { type RunSummaryRows, readJournal } from '@usp-ts/batch';

/** Sites shown in the "top" tables and charts. */
export const TOP = 20;

export interface SiteLine {
  site: string;
  status: string;
  reason: string | null;
  pages: number;
  requests: number;
  notModified: number;
  skipped: number;
  bytes: number;
  ms: number;
}

export interface ChangeCounts {
  new: number;
  changed: number;
  unchanged: number;
  removed: number;
  /** Rows without a `change` (a run without a state). */
  unmarked: number;
}

export interface ReasonGroup {
  reason: string;
  count: number;
  sites: string[];
}

export interface BatchReportData {
  kind: 'batch';
  dir: string;
  generatedAt: string;
  sites: number;
  byStatus: Record<string, number>;
  failing: ReasonGroup[];
  pages: number;
  changes: ChangeCounts;
  /** The TOP sites by pages written. */
  mostPages: { site: string; pages: number }[];
  /** The TOP sites by new + changed + removed pages. */
  mostChanged: ({ site: string } & ChangeCounts)[];
  slowestSites: { site: string; ms: number; status: string }[];
  /** Hosts by the time their sites took, summed. */
  slowestHosts: { host: string; ms: number; sites: number }[];
  requests: number;
  notModified: number;
  skipped: number;
  bytes: number;
  sitemaps: number;
}

function newChanges(): ChangeCounts {
  return { new: 0, changed: 0, unchanged: 0, removed: 0, unmarked: 0 };
}

/** A run's file: `NAME.ndjson` or `NAME.ndjson.gz`, `null` when neither exists. */
function runFile(dir: string, name: string): { path: string; gz: boolean } | null {
  for (const gz of [false, true]) {
    const path = join(dir, `${name}.ndjson${gz ? '.gz' : ''}`);
    if (existsSync(path)) return { path, gz };
  }
  return null;
}

/**
 * The lines of one output file, as far as the journal says the run committed it: bytes past the
 * last journal line belong to a site a kill interrupted, which a resumed run writes again. (A gzip
 * file's offsets count compressed bytes: it is read whole, its cut tail ends the stream.)
 */
async function* lines(dir: string, name: string, committed: number | null): AsyncGenerator<string> {
  const file = runFile(dir, name);
  if (file === null) return;
  let input: Readable = createReadStream(
    file.path,
    committed === null || file.gz ? {} : { end: committed - 1 },
  );
  if (committed === 0 && !file.gz) return;
  if (file.gz) input = input.pipe(createGunzip());
  const rl = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const line of rl) if (line !== '') yield line;
  } catch (err) {
    // A gzip stream cut by a kill: what decompressed before the cut was read.
    if ((err as NodeJS.ErrnoException).code !== 'Z_BUF_ERROR') throw err;
  }
}

/** Reasons grouped across sites: URLs and numbers in them made alike. */
export function reasonKey(reason: string | null): string {
  if (reason === null || reason === '') return '(no reason given)';
  return reason.replace(/https?:\/\/\S*[^\s:,;.)]/g, '<url>').replace(/\d+/g, 'N');
}

function hostOf(site: string): string {
  try {
    return new URL(site).host;
  } catch {
    return site;
  }
}

function top<T>(items: T[], key: (t: T) => number): T[] {
  return items.sort((a, b) => key(b) - key(a)).slice(0, TOP);
}

/** Reads a `usp batch --out DIR` directory into what its report shows. */
export async function collectBatchReport(dir: string, now: number = Date.now()): Promise<BatchReportData> {
  if (runFile(dir, 'sites') === null) {
    throw new Error(`${dir} holds no sites.ndjson: not a "usp batch --out" directory`);
  }
  const journal = readJournal(join(dir, 'journal.ndjson'));
  const last = journal?.entries.at(-1)?.offsets;
  const committed = (name: string): number | null => (journal === null ? null : (last?.[name] ?? 0));
  const sites: SiteLine[] = [];
  for await (const line of lines(dir, 'sites', committed('sites'))) sites.push(JSON.parse(line) as SiteLine);
  const perSite = new Map<string, ChangeCounts>();
  const all = newChanges();
  for await (const line of lines(dir, 'pages', committed('pages'))) {
    const row = JSON.parse(line) as { site: string; change?: keyof ChangeCounts };
    const kind: keyof ChangeCounts = row.change ?? 'unmarked';
    let c = perSite.get(row.site);
    if (c === undefined) {
      c = newChanges();
      perSite.set(row.site, c);
    }
    c[kind]++;
    all[kind]++;
  }
  let sitemaps = 0;
  for await (const _ of lines(dir, 'sitemaps', committed('sitemaps'))) sitemaps++;
  return summarise(dir, now, sites, perSite, all, sitemaps);
}

/**
 * A run of a result store (`usp batch --out FILE.sqlite`, `usp worker --out postgres://…`), as
 * its store's `readRunSummary` hands it over: the same report as a directory's.
 */
export function storeReport(where: string, rows: RunSummaryRows, now: number = Date.now()): BatchReportData {
  const perSite = new Map<string, ChangeCounts>();
  const all = newChanges();
  for (const { site, change, rows: n } of rows.changes) {
    const kind = (change ?? 'unmarked') as keyof ChangeCounts;
    if (!(kind in all)) continue;
    let c = perSite.get(site);
    if (c === undefined) {
      c = newChanges();
      perSite.set(site, c);
    }
    c[kind] += n;
    all[kind] += n;
  }
  const label = rows.runId === null ? `${where} (no run yet)` : `${where}, run ${rows.runId}`;
  return summarise(label, now, [...rows.sites] as SiteLine[], perSite, all, rows.sitemaps);
}

function summarise(
  dir: string,
  now: number,
  sites: SiteLine[],
  perSite: Map<string, ChangeCounts>,
  changes: ChangeCounts,
  sitemaps: number,
): BatchReportData {
  const byStatus: Record<string, number> = {};
  const reasons = new Map<string, ReasonGroup>();
  const hosts = new Map<string, { host: string; ms: number; sites: number }>();
  let requests = 0;
  let notModified = 0;
  let skipped = 0;
  let bytes = 0;
  for (const s of sites) {
    byStatus[s.status] = (byStatus[s.status] ?? 0) + 1;
    requests += s.requests ?? 0;
    notModified += s.notModified ?? 0;
    skipped += s.skipped ?? 0;
    bytes += s.bytes ?? 0;
    if (s.status !== 'ok') {
      const key = `${s.status}: ${reasonKey(s.reason)}`;
      let g = reasons.get(key);
      if (g === undefined) {
        g = { reason: key, count: 0, sites: [] };
        reasons.set(key, g);
      }
      g.count++;
      if (g.sites.length < 5) g.sites.push(s.site);
    }
    // An input line that is no URL has no host and took no time.
    if (s.status === 'invalid') continue;
    const host = hostOf(s.site);
    const h = hosts.get(host) ?? { host, ms: 0, sites: 0 };
    h.ms += s.ms ?? 0;
    h.sites++;
    hosts.set(host, h);
  }
  const moved = (c: ChangeCounts): number => c.new + c.changed + c.removed;
  return {
    kind: 'batch',
    dir,
    generatedAt: new Date(now).toISOString(),
    sites: sites.length,
    byStatus,
    failing: [...reasons.values()].sort((a, b) => b.count - a.count),
    pages: sites.reduce((n, s) => n + (s.pages ?? 0), 0),
    changes,
    mostPages: top(
      sites.map((s) => ({ site: s.site, pages: s.pages ?? 0 })),
      (s) => s.pages,
    ),
    mostChanged: top(
      [...perSite].map(([site, c]) => ({ site, ...c })),
      moved,
    ).filter((c) => moved(c) > 0),
    slowestSites: top(
      sites.map((s) => ({ site: s.site, ms: s.ms ?? 0, status: s.status })),
      (s) => s.ms,
    ),
    slowestHosts: top([...hosts.values()], (h) => h.ms),
    requests,
    notModified,
    skipped,
    bytes,
    sitemaps,
  };
}
