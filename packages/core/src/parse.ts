// What reading one document needs, without the tree walk: the model, the plugin interfaces, the
// registry, errors, the JSON form, and the helpers formats are written with (text lines, dates,
// URLs, feed entries). The engine's own parts (the XML engine, gzip, decoding) are on
// `@usp-ts/core/engine` (engine.ts).
// A parse worker and the format plugins import this entry point (`@usp-ts/core/parse`), so a
// thread that only parses does not load, compile and run the walk's modules. Everything here is
// also exported by the package's main entry point (index.ts), as the same objects.

// contract/: the model, the plugin interfaces, the registry, errors, the JSON form.
export {
  errorText,
  InvalidOptionError,
  InvalidUrlError,
  PluginConflictError,
  UspError,
  type UspErrorCode,
} from './contract/errors.js';
export { checkExtensions, createExtensionRouter, type ExtensionRouter } from './contract/extension.js';
export {
  type PageJSON,
  pageToJSON,
  plainPageDate,
  plainPageFields,
  type SitemapJSON,
  sitemapToJSON,
  type ToJSONOptions,
} from './contract/json.js';
export {
  type Alternate,
  CHANGE_FREQUENCIES,
  type ChangeFrequency,
  type ChildRef,
  DEFAULT_PRIORITY,
  type NewsStory,
  newPageDraft,
  type Page,
  type PageDraft,
  type PageExtensions,
  type RobotsGroup,
  type RobotsRules,
  type SitemapImage,
} from './contract/model.js';
export {
  countingPageStore,
  type EncodedPages,
  memoryPageStore,
  type PageStore,
  type PageWriter,
  type StoredPages,
  type UrlLines,
  type UrlLinesOptions,
} from './contract/page-store.js';
export type { ParsedDocument } from './contract/parsed-document.js';
export type {
  DocumentInfo,
  DocumentPosition,
  HeaderLookup,
  ParseContext,
  ParseLimits,
  ParseOutcome,
  Plugin,
  TextFormat,
  TextParser,
  XmlElement,
  XmlExtension,
  XmlExtensionHandler,
  XmlFormat,
  XmlHandler,
  XmlName,
  XmlRootMatch,
} from './contract/plugin.js';
export { MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP } from './contract/protocol-limits.js';
export { createRegistry, type Registry } from './contract/registry.js';
export {
  AbstractIndexSitemap,
  AbstractPagesSitemap,
  type DocumentSitemapType,
  IndexRobotsTxtSitemap,
  type IndexSitemap,
  type IndexSitemapType,
  IndexWebsiteSitemap,
  IndexXMLSitemap,
  InvalidSitemap,
  isIndexSitemap,
  isPagesSitemap,
  PagesAtomSitemap,
  PagesRSSSitemap,
  type PagesSitemap,
  type PagesSitemapType,
  PagesTextSitemap,
  PagesXMLSitemap,
  type Sitemap,
  type SitemapType,
} from './contract/sitemap.js';
export { SitemapDate } from './contract/sitemap-date.js';
export { OK_SUMMARY, type StopReason, type WalkOutcome, type WalkSummary } from './contract/walk-summary.js';
export type { KnownWarningCode, Warning, WarningCode, WarningListener } from './contract/warning.js';
export {
  headerLookup,
  type WebClient,
  type WebErrorResponse,
  type WebNotModifiedResponse,
  type WebRequestOptions,
  type WebResponse,
  type WebSuccessResponse,
} from './contract/web-client.js';

// engine/: reading one document (parseDocument and its options, dates, text lines, URLs, feed helpers).
export { parseIsoDate, parseIsoDateCold, parseRfc2822Date } from './engine/date.js';
export { parseDocument } from './engine/document.js';
export {
  DEFAULT_DOCUMENT_LIMITS,
  type DocumentLimits,
  type ParseDocumentOptions,
  type ParseObserver,
} from './engine/document-options.js';
export { FeedPageEmitter, feedNewsStory, feedText } from './engine/feed-entry.js';
export { type FeedLink, resolveFeedLink } from './engine/feed-url.js';
export type { Gunzip } from './engine/gunzip.js';
export {
  createLineSplitter,
  DEFAULT_MAX_LINE_LENGTH,
  type LineListener,
  type LineSplitter,
  type LineSplitterOptions,
  pythonStrip,
} from './engine/lines.js';
export { rejectUnknownOptions } from './engine/options.js';
export { type ParsedSitemap, type ParseSitemapNodeOptions, parseSitemap } from './engine/parse-sitemap.js';
export { strippedText } from './engine/text.js';
export {
  isHttpUrl,
  resolveUrl,
  stripUrlToHomepage,
  type UrlProblem,
  unfetchableUrl,
  unfetchableUrlMessage,
} from './engine/url.js';
export { detachString } from './engine/xml.js';
