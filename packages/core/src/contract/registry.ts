import { PluginConflictError } from './errors.js';
import type { Plugin, TextFormat, XmlFormat } from './plugin.js';

/**
 * An explicit, ordered set of formats. No global state: build one per configuration;
 * two registries with different formats can live side by side.
 */
export interface Registry {
  readonly plugins: readonly Plugin[];
  /** Text formats in the order given; the first that claims a non-XML document parses it. */
  readonly textFormats: readonly TextFormat[];
  /** The XML format claiming this root element, if any. */
  xmlFormatFor(ns: string, local: string): XmlFormat | undefined;
}

/**
 * A registry made when a walk first needs one: the walk calls it the first time it has a document
 * to parse (once a walk), so a walk whose answers are all 304s and errors never loads the formats'
 * code (`import()` them inside). Return the same promise every time to share one registry between
 * walks. A rejected promise fails that document like a parser error: an `InvalidSitemap`.
 */
export type RegistryLoader = () => Promise<Registry>;

export function createRegistry(plugins: readonly Plugin[]): Registry {
  const exact = new Map<string, XmlFormat>();
  const anyNs = new Map<string, XmlFormat>();
  const textFormats: TextFormat[] = [];
  const names = new Set<string>();
  for (const plugin of plugins) {
    if (names.has(plugin.name)) throw new PluginConflictError(`Two plugins are named ${plugin.name}`);
    names.add(plugin.name);
    if (plugin.kind === 'text') {
      textFormats.push(plugin);
      continue;
    }
    for (const root of plugin.roots) {
      const map = root.ns === '*' ? anyNs : exact;
      const key = root.ns === '*' ? root.local : `${root.ns}\u0000${root.local}`;
      const other = map.get(key);
      if (other !== undefined) {
        throw new PluginConflictError(
          `Formats ${other.name} and ${plugin.name} both claim <${root.local}> in namespace ${root.ns || '(none)'}`,
        );
      }
      map.set(key, plugin);
    }
  }
  return {
    plugins: [...plugins],
    textFormats,
    xmlFormatFor: (ns, local) => exact.get(`${ns}\u0000${local}`) ?? anyNs.get(local),
  };
}
