import {
  checkExtensions,
  InvalidOptionError,
  type ParseContext,
  type XmlElement,
  type XmlExtension,
  type XmlFormat,
  type XmlHandler,
  type XmlRootMatch,
} from '@usp-ts/core/parse';
import { isSitemapNamespace, SITEMAP_NAMESPACES } from './namespaces.js';
import { SitemapIndexHandler } from './sitemap-index.js';
import { UrlsetHandler } from './urlset.js';

export interface XmlSitemapOptions {
  /** Namespace extensions that read the elements of each `<url>` (default: none). */
  extensions?: readonly XmlExtension[];
}

const ROOTS: readonly XmlRootMatch[] = [
  ...[...SITEMAP_NAMESPACES, ''].flatMap((ns) => [
    { ns, local: 'urlset' },
    { ns, local: 'sitemapindex' },
  ]),
  // usp reads a urlset in any namespace as sitemaps.org; so do we, with a warning.
  { ns: '*', local: 'urlset' },
  { ns: '*', local: 'sitemapindex' },
];

/**
 * The sitemaps.org format: `<urlset>` (pages, with hreflang alternates) and `<sitemapindex>`
 * (child sitemaps). Throws `PluginConflictError` when two extensions claim one namespace.
 */
export function xmlSitemap(options: XmlSitemapOptions = {}): XmlFormat {
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionError('options', 'must be an object');
  }
  const extensions = options.extensions ?? [];
  if (!Array.isArray(extensions))
    throw new InvalidOptionError('extensions', 'must be an array of XmlExtension');
  for (const ext of extensions) {
    if (
      ext === null ||
      typeof ext !== 'object' ||
      typeof ext.create !== 'function' ||
      !Array.isArray(ext.namespaces)
    ) {
      throw new InvalidOptionError(
        'extensions',
        'each item must be an XmlExtension ({ name, namespaces, create })',
      );
    }
  }
  for (const ext of extensions) {
    for (const ns of ext.namespaces) {
      // The format reads these itself; an extension claiming one would never see its elements.
      if (ns === '' || isSitemapNamespace(ns)) {
        throw new InvalidOptionError(
          'extensions',
          `${ext.name} claims the sitemaps.org namespace ${ns || '(none)'}`,
        );
      }
    }
  }
  checkExtensions(extensions);
  const frozen = Object.freeze([...extensions]);
  return {
    kind: 'xml',
    name: 'xml-sitemap',
    roots: ROOTS,
    createHandler(ctx: ParseContext, root: XmlElement): XmlHandler {
      if (!isSitemapNamespace(root.ns)) {
        ctx.warn(
          'missing-namespace',
          root.ns === ''
            ? `<${root.local}> has no namespace; read as sitemaps.org`
            : `<${root.local}> is in namespace ${root.ns}; read as sitemaps.org`,
        );
      }
      return root.local === 'sitemapindex'
        ? new SitemapIndexHandler(ctx, root)
        : new UrlsetHandler(ctx, root, frozen);
    },
  };
}
