// The public surface of core, by name: what plugin authors and advanced users need. Helpers the
// pipeline uses inside (byte sniffing, encoding detection, path lists) stay unexported; a test
// in tools/api-surface compares this list with its committed copy.

// contract/ and engine/: one document (see parse.ts, the `@usp-ts/core/parse` entry point); a
// RegistryLoader is the walk's only (a registry made when a walk first has a document to parse).
export type { RegistryLoader } from './contract/registry.js';
export * from './parse.js';

// walk/: the tree walk over a WebClient you give (usp's functions of the Python names supply Node's).
export type { BodyHasher, DocumentResponse, DocumentToParse } from './walk/document-response.js';
export { KNOWN_SITEMAP_PATHS } from './walk/known-paths.js';
export {
  type ConditionalValidators,
  DEFAULT_CONCURRENCY,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_SITEMAPS,
  DEFAULT_STREAM_BUFFER_PAGES,
  type RecurseCallback,
  type RecurseListCallback,
  type ResponseInfo,
  type TreeOptions,
  type WalkPagesWithClientOptions,
} from './walk/options.js';
export {
  DEFAULT_OPEN_AFTER_FAILED_DOCUMENTS,
  DEFAULT_OPEN_AFTER_THROTTLED_DOCUMENTS,
  OriginBreaker,
  type OriginBreakerOptions,
  type OriginOutcome,
  type OriginState,
} from './walk/origin-breaker.js';
export type { PageWalk, WalkedPage, WalkedSitemapInfo } from './walk/page-walk.js';
export type {
  ReuseKind,
  Revisit,
  RevisitPlan,
  StoredDocument,
  StoredDocumentType,
  WalkedDocument,
} from './walk/revisit.js';
export type { SkippedSitemap, SkipReason } from './walk/skipped.js';
export {
  sitemapTreeForHomepageWithClient,
  sitemapTreeForUrlWithClient,
  walkPagesWithClient,
  walkSitemapPagesWithClient,
} from './walk/tree.js';
export type { TreeNodeEvent, TreeNodeListener } from './walk/tree-order.js';
export type { WalkStats } from './walk/walk-stats.js';
