// `@usp-ts/core/engine`: the parts the document pipeline is built from, for the packages built
// on core (usp's parse workers, its gzip on node:zlib) and for whoever builds a pipeline of their
// own: the XML engine, the byte pipeline (gzip, decoding), W3C dates, the node a parsed document
// becomes. Not on `.` or `./parse`: a user or a plugin author does not need them, and they may
// change with the engine. Everything here is the same object core's own modules use.
export { type DocumentNodeParts, sitemapFromDocument } from './contract/parsed-document.js';
export { createPagesSitemap } from './contract/sitemap.js';
export { parseW3cDate } from './engine/date.js';
export { createDocumentDecoder, type DocumentDecoder } from './engine/decode.js';
export { type UnwrapGzipOptions, unwrapGzip } from './engine/detect.js';
export { checkParseDocumentOptions } from './engine/document-options.js';
export { capGunzipOutput, GunzipError, gunzip } from './engine/gunzip.js';
export { mix32 } from './engine/mix32.js';
export { urlKey } from './engine/url.js';
export {
  createXmlEngine,
  DEFAULT_XML_LIMITS,
  type XmlEngine,
  type XmlEngineLimits,
  type XmlEngineOptions,
  type XmlEngineResult,
} from './engine/xml.js';
