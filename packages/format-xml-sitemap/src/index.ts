export { parseChangeFrequency } from './change-frequency.js';
export { isSitemapNamespace, SITEMAP_NAMESPACE, SITEMAP_NAMESPACES, XHTML_NAMESPACE } from './namespaces.js';
export { parsePriority } from './priority.js';
export { type XmlSitemapOptions, xmlSitemap } from './xml-sitemap.js';
