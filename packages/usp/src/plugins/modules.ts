import { createRequire } from 'node:module';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRegistry, type Plugin, type Registry, UspError, type XmlExtension } from '@usp-ts/core/parse';
import { defaultPlugins } from './defaults.js';

/** What plugin modules gave: formats, and extensions for the XML sitemap format. */
export interface LoadedPlugins {
  readonly formats: readonly Plugin[];
  readonly extensions: readonly XmlExtension[];
}

/** A plugin module that cannot be used; `specifier` is as the caller wrote it. */
export class PluginModuleError extends UspError {
  declare readonly code: 'USP_PLUGIN_MODULE';
  readonly specifier: string;
  constructor(specifier: string, message: string, options?: { cause?: unknown }) {
    super('USP_PLUGIN_MODULE', `plugin ${specifier}: ${message}`, options);
    this.name = 'PluginModuleError';
    this.specifier = specifier;
  }
}

/**
 * The URL a plugin specifier names: a URL as it is, a path (`./x.mjs`, `/abs/x.js`) against
 * `cwd`, a package name as Node resolves it from `cwd` (not from this package).
 */
export function resolvePluginModule(specifier: string, cwd = process.cwd()): string {
  if (/^(file|data|node):/.test(specifier)) return specifier;
  if (specifier.startsWith('.') || isAbsolute(specifier)) {
    return pathToFileURL(resolve(cwd, specifier)).href;
  }
  try {
    return pathToFileURL(createRequire(resolve(cwd, 'package.json')).resolve(specifier)).href;
  } catch (err) {
    throw new PluginModuleError(specifier, `cannot find it from ${cwd} (a path needs ./)`, { cause: err });
  }
}

function isFormat(x: unknown): x is Plugin {
  const p = x as Plugin;
  return typeof p === 'object' && p !== null && (p.kind === 'text' || p.kind === 'xml');
}

function isExtension(x: unknown): x is XmlExtension {
  const e = x as XmlExtension;
  return (
    typeof e === 'object' &&
    e !== null &&
    Array.isArray(e.namespaces) &&
    typeof e.create === 'function' &&
    typeof e.name === 'string'
  );
}

/**
 * Imports plugin modules (resolved URLs, see {@link resolvePluginModule}): each default export is
 * a factory, called with no argument, or a value; either gives one plugin or a list. A plugin is
 * a format (`kind: 'text' | 'xml'`) or a namespace extension (`namespaces`, `create`).
 */
export async function importPlugins(urls: readonly string[]): Promise<LoadedPlugins> {
  const formats: Plugin[] = [];
  const extensions: XmlExtension[] = [];
  for (const url of urls) {
    let mod: { default?: unknown };
    try {
      mod = (await import(url)) as { default?: unknown };
    } catch (err) {
      throw new PluginModuleError(url, `cannot import it: ${(err as Error).message?.split('\n')[0]}`, {
        cause: err,
      });
    }
    if (mod.default === undefined) throw new PluginModuleError(url, 'has no default export');
    let value: unknown = mod.default;
    if (typeof value === 'function') {
      try {
        value = (value as () => unknown)();
      } catch (err) {
        throw new PluginModuleError(url, `its factory threw: ${(err as Error).message}`, { cause: err });
      }
    }
    for (const item of Array.isArray(value) ? value : [value]) {
      if (isFormat(item)) formats.push(item);
      else if (isExtension(item)) extensions.push(item);
      else {
        throw new PluginModuleError(
          url,
          'its default export is neither a plugin factory nor a list of plugins (formats with kind, extensions with namespaces and create)',
        );
      }
    }
  }
  return { formats, extensions };
}

/**
 * The default registry with these plugins added: their formats first (a format of yours claims
 * its documents before the built-in ones), their extensions beside Google News, Image and Video
 * in the XML sitemap format.
 */
export function registryWithPlugins(loaded: LoadedPlugins): Registry {
  return createRegistry([...loaded.formats, ...defaultPlugins({ extensions: loaded.extensions })]);
}
