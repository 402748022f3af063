import type { PageJSON } from '@usp-ts/core';
import type { Change, ListedPageRow, PageRow, SitemapRow, SiteResult } from './rows.js';

// The rows of a run as table columns: one mapping for every SQL store (SQLite, PostgreSQL) and
// for `usp export`, so a row reads back the same from any of them. Scalars are columns (what
// queries filter on); lists and extension data are JSON text (`jsonb` in PostgreSQL).

/** A column value: text, a number, or NULL. */
export type ColumnValue = string | number | null;

/** The page columns, in table order, after `run_id`. */
export const PAGE_COLUMNS = [
  'site',
  'sitemap',
  'url',
  'last_modified',
  'change_frequency',
  'priority',
  'change',
  'news_story',
  'images',
  'alternates',
  'extensions',
] as const;

/** The sitemap columns, in table order, after `run_id`. */
export const SITEMAP_COLUMNS = [
  'site',
  'url',
  'final_url',
  'parent',
  'type',
  'status',
  'not_modified',
  'skipped',
  'etag',
  'last_modified',
  'bytes',
  'pages',
  'ms',
  'change',
  'reason',
] as const;

/** The site result columns, in table order, after `run_id`. */
export const SITE_COLUMNS = [
  'site',
  'status',
  'reason',
  'pages',
  'sitemaps',
  'requests',
  'not_modified',
  'skipped',
  'bytes',
  'ms',
] as const;

const json = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));

/** A page row's values in `PAGE_COLUMNS` order. */
export function pageValues(row: PageRow): ColumnValue[] {
  if (row.change === 'removed') {
    return [row.site, row.sitemap, row.url, null, null, null, 'removed', null, null, null, null];
  }
  return [
    row.site,
    row.sitemap,
    row.url,
    row.lastModified,
    row.changeFrequency,
    row.priority,
    row.change ?? null,
    json(row.newsStory),
    json(row.images),
    json(row.alternates),
    json(row.extensions),
  ];
}

/** A sitemap row's values in `SITEMAP_COLUMNS` order (booleans as 0/1). */
export function sitemapValues(row: SitemapRow): ColumnValue[] {
  return [
    row.site,
    row.url,
    row.finalUrl ?? null,
    row.parent,
    row.type,
    row.status,
    row.notModified ? 1 : 0,
    row.skipped ? 1 : 0,
    row.etag,
    row.lastModified,
    row.bytes,
    row.pages,
    row.ms,
    row.change ?? null,
    row.reason ?? null,
  ];
}

/** A site result's values in `SITE_COLUMNS` order. */
export function siteValues(row: SiteResult): ColumnValue[] {
  return [
    row.site,
    row.status,
    row.reason,
    row.pages,
    row.sitemaps,
    row.requests,
    row.notModified,
    row.skipped,
    row.bytes,
    row.ms,
  ];
}

const parsed = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : (v ?? null));

/**
 * A page row read back from its columns (a driver may hand JSON columns over parsed, as
 * PostgreSQL's `jsonb`, or as text): the same keys in the same order as the NDJSON sink writes.
 */
export function pageRowOf(record: Readonly<Record<(typeof PAGE_COLUMNS)[number], unknown>>): PageRow {
  if (record.change === 'removed') {
    return {
      site: record.site as string,
      sitemap: record.sitemap as string,
      url: record.url as string,
      change: 'removed',
    };
  }
  const page = {
    site: record.site as string,
    sitemap: record.sitemap as string,
    url: record.url as string,
    priority: Number(record.priority),
    lastModified: (record.last_modified as string | null) ?? null,
    changeFrequency: (record.change_frequency as string | null) ?? null,
    newsStory: parsed(record.news_story) as PageJSON['newsStory'],
    images: parsed(record.images) as PageJSON['images'],
    alternates: parsed(record.alternates) as PageJSON['alternates'],
  } as { -readonly [K in keyof ListedPageRow]: ListedPageRow[K] };
  const extensions = parsed(record.extensions);
  if (extensions !== null) page.extensions = extensions as PageJSON['extensions'];
  if (record.change !== null && record.change !== undefined)
    page.change = record.change as ListedPageRow['change'];
  return page;
}

/**
 * A sitemap row read back from its columns (booleans as 0/1 or true/false, `bigint` as text): the
 * optional keys (`finalUrl`, `change`, `reason`) only when set, as the NDJSON sink writes them.
 */
export function sitemapRowOf(
  record: Readonly<Record<(typeof SITEMAP_COLUMNS)[number], unknown>>,
): SitemapRow {
  const row = {
    site: record.site as string,
    url: record.url as string,
    ...(record.final_url !== null && record.final_url !== undefined
      ? { finalUrl: record.final_url as string }
      : {}),
    parent: (record.parent as string | null) ?? null,
    type: record.type as string,
    status: record.status === null || record.status === undefined ? null : Number(record.status),
    notModified: Boolean(record.not_modified),
    skipped: Boolean(record.skipped),
    etag: (record.etag as string | null) ?? null,
    lastModified: (record.last_modified as string | null) ?? null,
    bytes: Number(record.bytes),
    pages: Number(record.pages),
    ms: Number(record.ms),
    ...(record.change !== null && record.change !== undefined ? { change: record.change as Change } : {}),
    ...(record.reason !== null && record.reason !== undefined ? { reason: record.reason as string } : {}),
  };
  return row;
}

/** Which page rows to read back from an SQL store (`usp export`). */
export interface PageRowFilter {
  /** A run id, or `latest` (the run started last). Default `latest`. */
  readonly run?: string;
  /** Only rows with one of these changes (default: all). */
  readonly changes?: readonly Change[];
  /** Only this site (its normalised homepage URL). */
  readonly site?: string;
}

/**
 * The query of the page rows `filter` selects, the same for every SQL store: `placeholder(n)`
 * writes the n-th parameter (`?` for SQLite, `$n` for PostgreSQL). Rows come by site, in the
 * order they were written.
 */
export function pageRowsQuery(
  filter: PageRowFilter,
  placeholder: (n: number) => string,
): { sql: string; params: string[] } {
  const params: string[] = [];
  const param = (v: string): string => {
    params.push(v);
    return placeholder(params.length);
  };
  const run = filter.run ?? 'latest';
  const where = [
    run === 'latest'
      ? 'run_id = (SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1)'
      : `run_id = ${param(run)}`,
  ];
  if (filter.changes !== undefined)
    where.push(`change IN (${filter.changes.map((c) => param(c)).join(', ')})`);
  if (filter.site !== undefined) where.push(`site = ${param(filter.site)}`);
  return { sql: `SELECT ${PAGE_COLUMNS.join(', ')} FROM page_rows WHERE ${where.join(' AND ')}`, params };
}
