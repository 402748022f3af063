import type { Page } from '../contract/model.js';
import type { StoredPages } from '../contract/page-store.js';
import type { Sitemap } from '../contract/sitemap.js';
import type { SitemapDate } from '../contract/sitemap-date.js';
import type { Ancestry } from './ancestry.js';
import type { DocumentResponse } from './document-response.js';
import type { WalkedSitemapInfo } from './page-walk.js';
import type { ReuseKind } from './revisit.js';
import type { TreePlace } from './tree-order.js';

/** Receives each batch of pages as a document is parsed; awaiting it pauses that document. */
export type PageSink = (pages: Page[], sitemap: WalkedSitemapInfo) => void | Promise<void>;

/** One sitemap the walk is asked for. */
export interface FetchTask {
  readonly url: string;
  /** usp's recursion level: robots.txt and known paths are 0. */
  readonly level: number;
  readonly ancestry: Ancestry;
  readonly lastModified: SitemapDate | null;
  /** Top-level probes (robots.txt, known paths) report no `fetch` warning for a 404. */
  readonly quiet404?: boolean;
  /** The index that listed it (absent at the top level). */
  readonly parentUrl?: string;
  /** Where its node will stand in the tree, for `onTreeNode` (absent without that hook). */
  readonly place?: TreePlace;
}

/** What became of a `FetchTask`: its node, whatever happened. */
export interface FetchResult {
  readonly node: Sitemap;
  /** The URL actually requested (the node URL is the final one). */
  readonly requestedUrl: string;
  /** Response Content-Type, when there was a response. */
  readonly contentType: string | null;
  /** The request was never made (walk stopped first). */
  readonly unfetched: boolean;
  /** The node stands for a stored document (`TreeOptions.revisit`). */
  readonly reused?: ReuseKind;
  /** The answer to its request (`WalkedDocument.response`), set by the fetch step when one came. */
  response?: DocumentResponse;
  /** What the page store kept of its pages (`WalkedDocument.stored`), set by the parse step. */
  stored?: StoredPages;
  /** The children its document listed (robots.txt, an index), followed or not; unset for none. */
  listed?: number;
}

/** Runs a caller's hook; its exception is not the walk's (a hook must not break a crawl). */
export function hook<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}
