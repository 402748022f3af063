import type { InvalidSitemap, WalkedDocument } from '@usp-ts/core';
import type { Mutable } from './mutable.js';
import type { PageTracker } from './page-changes.js';
import type { PageRow, SitemapRow, SiteResult, SiteStatus } from './rows.js';
import type { SiteOutput } from './site-sink.js';
import type { SitemapState } from './state-store.js';

/**
 * One site's rows as the walk reports its documents: a sitemap row per document, the page rows
 * its page trackers decide (`emit`), and the counts of the site's result row.
 */
export class SiteRows {
  readonly site: string;
  readonly #output: SiteOutput;
  /** Rows are marked against a state (`change`). */
  readonly #marking: boolean;
  pages = 0;
  sitemaps = 0;
  skipped = 0;
  notModified = 0;
  bytes = 0;
  /**
   * The walk keeps going past a page store that throws (a page is not worth a site): an
   * exception here is ours, and the site ends as `error` rather than `ok` without its pages.
   */
  #failure: { error: unknown } | null = null;

  constructor(site: string, output: SiteOutput, marking: boolean) {
    this.site = site;
    this.#output = output;
    this.#marking = marking;
    this.emitLine =
      output.pageLine === undefined
        ? undefined
        : (json) => {
            if (this.#failure !== null) return;
            try {
              output.pageLine?.(json);
              this.pages++;
            } catch (error) {
              this.#failure = { error };
            }
          };
    this.emitLines =
      output.pageLine === undefined || output.pageLines === undefined
        ? undefined
        : (text, rows) => {
            if (this.#failure !== null) return;
            try {
              output.pageLines?.(text, rows);
              this.pages += rows;
            } catch (error) {
              this.#failure = { error };
            }
          };
  }

  /** One page row (`PageTrackerOptions.emit`): written to the output, or the failure kept. */
  readonly emit = (row: PageRow, json?: string): void => {
    if (this.#failure !== null) return;
    try {
      this.#output.page(row, json);
      this.pages++;
    } catch (error) {
      this.#failure = { error };
    }
  };

  /**
   * One page row as its JSON text (`PageTrackerOptions.emitLine`), when the output takes rows so
   * (`SiteOutput.pageLine`); `undefined` when it takes only row objects.
   */
  readonly emitLine: ((json: string) => void) | undefined;

  /** Held page rows as their lines in bulk (`SiteOutput.pageLines`), when the output takes them so. */
  readonly emitLines: ((text: Buffer, rows: number) => void) | undefined;

  /** Throws what the output threw at a page row, if it did. */
  rethrowPageFailure(): void {
    if (this.#failure !== null) throw this.#failure.error;
  }

  /**
   * The document's sitemap row (none for a known-path probe that missed: noise, not a sitemap),
   * and its share of the site's counts. `before` is its state of the last run, `tracker` its page
   * writer when its body was parsed.
   */
  document(doc: WalkedDocument, before: SitemapState | null, tracker: PageTracker | null): void {
    const { node, response } = doc;
    if (response !== null) {
      if (response.status === 304) this.notModified++;
      this.bytes += response.bytes;
    }
    // The type, not `instanceof`: core's branded check walks the prototype chain of every node
    // that is not one (twice a document here).
    const invalid = node.type === 'InvalidSitemap';
    if (invalid && doc.level === 0 && !doc.requestedUrl.endsWith('/robots.txt')) return;
    this.sitemaps++;
    if (doc.reused === 'skipped') this.skipped++;
    // Field by field, in the row's order: in an object literal, every property after a
    // conditional spread is defined through a V8 runtime call (a dozen a row here).
    const row = { site: this.site, url: doc.requestedUrl } as Mutable<SitemapRow>;
    if (node.url !== doc.requestedUrl) row.finalUrl = node.url;
    row.parent = doc.parentUrl;
    row.type = node.type;
    row.status = response?.status ?? null;
    row.notModified = doc.reused === 'not-modified';
    row.skipped = doc.reused === 'skipped';
    row.etag = response?.etag ?? before?.etag ?? null;
    row.lastModified = response?.lastModified ?? before?.lastModified ?? null;
    row.bytes = response?.bytes ?? 0;
    row.pages = tracker?.count ?? 0;
    row.ms = Math.round(response?.ms ?? 0);
    if (this.#marking && !invalid) {
      row.change =
        doc.reused !== null ? 'unchanged' : (tracker?.change ?? (before === null ? 'new' : 'changed'));
    }
    if (invalid) row.reason = (node as InvalidSitemap).reason;
    this.#output.sitemap(row);
  }

  /** The site's result row. */
  result(status: SiteStatus, reason: string | null, requests: number, ms: number): SiteResult {
    return {
      site: this.site,
      status,
      reason,
      pages: this.pages,
      sitemaps: this.sitemaps,
      requests,
      notModified: this.notModified,
      skipped: this.skipped,
      bytes: this.bytes,
      ms: Math.round(ms),
    };
  }
}
