import type { ChildRef } from '../contract/model.js';
import type { StoredPages } from '../contract/page-store.js';
import { type ParsedDocument, sitemapFromDocument } from '../contract/parsed-document.js';
import type { Sitemap, SitemapType } from '../contract/sitemap.js';
import type { SitemapDate } from '../contract/sitemap-date.js';
import type { DocumentResponse } from './document-response.js';

/** The node types a stored document can stand for (a fetched document, never the root or an error). */
export type StoredDocumentType = Exclude<SitemapType, 'IndexWebsiteSitemap' | 'InvalidSitemap'>;

/**
 * What an earlier crawl read from a document and a walk may replay instead of reading it again:
 * its type and, for robots.txt and indexes, the children it listed (with their `<lastmod>`).
 */
export interface StoredDocument {
  readonly type: StoredDocumentType;
  readonly children: readonly ChildRef[];
}

/** What to do about one document, decided before it is requested. */
export interface RevisitPlan {
  /** Validators for a conditional request; a 304 then asks `Revisit.notModified`. */
  readonly ifNoneMatch?: string;
  readonly ifModifiedSince?: string;
  /**
   * Don't request the document at all: this stored copy stands for it (its children are walked
   * by the same rules). For a child whose index `<lastmod>` has not moved, on a site whose
   * `<lastmod>` values are known to be honest.
   */
  readonly reuse?: StoredDocument;
}

/**
 * An incremental walk's hooks (`TreeOptions.revisit`): how the walk uses what an earlier crawl
 * stored. Without them a 304 is an `InvalidSitemap` "Not modified" and its subtree is lost; with
 * them robots.txt and indexes answering 304 replay their stored children and the walk goes on.
 * Both are called synchronously; an exception counts as "no answer".
 */
export interface Revisit {
  /** `indexLastModified` is the `<lastmod>` the parent index gives this document now. */
  plan(url: string, indexLastModified: SitemapDate | null): RevisitPlan | undefined;
  /** The server said 304 for `url`: the stored document to replay, or undefined to report it invalid. */
  notModified(url: string): StoredDocument | undefined;
}

/** How a document was answered without reading a body. */
export type ReuseKind = 'not-modified' | 'skipped';

/** A document as the walk finished it, before its children are fetched (`TreeOptions.onDocument`). */
export interface WalkedDocument {
  /** The URL requested (the node's URL is the final one, after redirects). */
  readonly requestedUrl: string;
  readonly node: Sitemap;
  /** The index or robots.txt that listed it; `null` at the top level (robots.txt, known paths). */
  readonly parentUrl: string | null;
  /** usp's recursion level: robots.txt and known paths are 0. */
  readonly level: number;
  /** The children the walk goes on to (robots.txt and indexes; replayed ones included). */
  readonly children: readonly ChildRef[];
  /** Set when the node was built from a `StoredDocument` instead of a body. */
  readonly reused: ReuseKind | null;
  /**
   * The answer to its request (status, validators, bytes, time, body hash); `null` when no answer
   * came back (not requested: reused, refused, a repeat; or the request was aborted).
   */
  readonly response: DocumentResponse | null;
  /**
   * What the page store's writer returned for its pages (`PageWriter.close()`, its `count` the
   * pages read from it); `null` when no body was parsed. The node of a pages sitemap reads its
   * pages from it: a store of the caller's can hand more back (what it made of those pages).
   */
  readonly stored: StoredPages | null;
}

/**
 * The node a stored document stands for: an index with the stored entries, or a pages sitemap
 * with no pages (they were not read again: "unchanged", not "empty").
 */
export function replayedNode(url: string, doc: StoredDocument, lastModified: SitemapDate | null): Sitemap {
  const replayed: ParsedDocument = {
    url,
    type: doc.type,
    children: [...doc.children],
    warnings: [],
    bytes: 0,
    truncated: false,
  };
  return sitemapFromDocument(replayed, { lastModified });
}
