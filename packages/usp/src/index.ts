// Everything core exports (its entry lists its public names one by one: the model, JSON form,
// registry, plugin interfaces, errors, helpers). Core's walk functions take a client and a
// registry and are named `...WithClient`; the Node entry points below (usp's Python names) are
// the same walks with Node's defaults, so no name here means two different functions.
export * from '@usp-ts/core';
export { googleImage } from '@usp-ts/ext-google-image';
export { googleNews } from '@usp-ts/ext-google-news';
export {
  googleVideo,
  type Video,
  type VideoPlatformName,
  type VideoPlatforms,
  type VideoPrice,
  type VideoRelationship,
  type VideoRestriction,
  type VideoUploader,
} from '@usp-ts/ext-google-video';
export { createWebClient, type WebClientOptions } from '@usp-ts/fetcher';
export { atom } from '@usp-ts/format-atom';
export { robotsTxt } from '@usp-ts/format-robots';
export { rss } from '@usp-ts/format-rss';
export { plainText } from '@usp-ts/format-text';
export { xmlSitemap } from '@usp-ts/format-xml-sitemap';
export {
  LOCAL_DUMMY_URL,
  type ParseSitemapOptions,
  parseSitemapDocument,
  sitemapFromString,
  UNFETCHED_CHILD_REASON,
} from './api/document.js';
export { pageUrls } from './api/page-urls.js';
export {
  clientOptionsFor,
  type SitemapTreeOptions,
  sitemapTreeForHomepage,
  sitemapTreeForUrl,
  type WalkPagesOptions,
  walkPages,
  walkSitemapPages,
} from './api/tree.js';
export {
  type Finding,
  type ValidateDocumentOptions,
  type ValidateOptions,
  type ValidationReport,
  validateDocument,
  validateSitemap,
} from './api/validate.js';
export { nodeGunzip } from './node/gunzip.js';
export { filePageStore } from './pages/file-store.js';
export { createDefaultRegistry, defaultPlugins } from './plugins/defaults.js';
export {
  importPlugins,
  type LoadedPlugins,
  PluginModuleError,
  registryWithPlugins,
  resolvePluginModule,
} from './plugins/modules.js';
export { createWorkerParser, type WorkerParser, type WorkerParserOptions } from './worker/pool.js';
