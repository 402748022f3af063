import { checkExtensions, type XmlExtension, type XmlFormat } from '@usp-ts/core/parse';
import { AtomHandler } from './atom-handler.js';

export const ATOM_10_NAMESPACE = 'http://www.w3.org/2005/Atom';
export const ATOM_03_NAMESPACE = 'http://purl.org/atom/ns#';

export interface AtomOptions {
  /**
   * Namespace extensions that receive the elements of each `<entry>` in the namespaces they claim
   * (default: none).
   */
  extensions?: readonly XmlExtension[];
}

/**
 * Atom 1.0 and 0.3 with one parser: every `<entry>` with a link becomes a page whose news story
 * carries the entry's title (or summary) and its published (else updated) date.
 *
 * Claims `<feed>` in the Atom 1.0 namespace, the 0.3 namespace, and no namespace.
 */
export function atom(options: AtomOptions = {}): XmlFormat {
  const extensions = [...(options.extensions ?? [])];
  checkExtensions(extensions);
  return {
    kind: 'xml',
    name: 'atom',
    roots: [ATOM_10_NAMESPACE, ATOM_03_NAMESPACE, ''].map((ns) => ({ ns, local: 'feed' })),
    createHandler: (ctx, root) => new AtomHandler(ctx, root, extensions),
  };
}
