import { checkExtensions, type XmlExtension, type XmlFormat } from '@usp-ts/core/parse';
import { RssHandler } from './rss-handler.js';

export interface RssOptions {
  /**
   * Namespace extensions that receive the elements of each `<item>` in the namespaces they claim
   * (default: none). This is how Media RSS or Dublin Core could be read by a separate package.
   */
  extensions?: readonly XmlExtension[];
}

/**
 * RSS 2.0 (and the 0.9x feeds shaped like it): every `<item>` with a `<link>` becomes a page whose
 * news story carries the item's title (or description) and `<pubDate>`.
 *
 * Claims `<rss>` in any namespace, as usp does: RSS has none, and the odd feed that declares one
 * is still RSS. RSS 1.0 (`<rdf:RDF>`) is not claimed.
 */
export function rss(options: RssOptions = {}): XmlFormat {
  const extensions = [...(options.extensions ?? [])];
  checkExtensions(extensions);
  return {
    kind: 'xml',
    name: 'rss',
    roots: [{ ns: '*', local: 'rss' }],
    createHandler: (ctx, root) => new RssHandler(ctx, root, extensions),
  };
}
