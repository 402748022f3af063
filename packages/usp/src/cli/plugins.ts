import type { Plugin, Registry, XmlExtension } from '@usp-ts/core';
import {
  importPlugins,
  PluginModuleError,
  registryWithPlugins,
  resolvePluginModule,
} from '../plugins/modules.js';
import { list, type Parsed, UsageError } from './args.js';

export { PLUGIN_HELP, PLUGIN_OPTIONS } from './plugin-flags.js';

export interface CliPlugins {
  /** The modules' URLs, for the parse workers to import. */
  urls: string[];
  /** The default registry with the plugins added; `undefined` without `--plugin`. */
  registry: Registry | undefined;
}

/** Loads the `--plugin` modules now, so that a bad one is a one-line usage error (exit 2). */
export async function pluginsFrom(p: Parsed, usage: string): Promise<CliPlugins> {
  const specifiers = list(p, 'plugin');
  if (specifiers.length === 0) return { urls: [], registry: undefined };
  const urls: string[] = [];
  const formats: Plugin[] = [];
  const extensions: XmlExtension[] = [];
  for (const specifier of specifiers) {
    try {
      const url = resolvePluginModule(specifier);
      const loaded = await importPlugins([url]);
      urls.push(url);
      formats.push(...loaded.formats);
      extensions.push(...loaded.extensions);
    } catch (err) {
      const reason =
        err instanceof PluginModuleError ? err.message.replace(/^plugin \S+: /, '') : String(err);
      throw new UsageError(`option --plugin ${specifier}: ${reason}`, usage);
    }
  }
  try {
    return { urls, registry: registryWithPlugins({ formats, extensions }) };
  } catch (err) {
    // Two plugins claiming one root element or namespace.
    throw new UsageError(`option --plugin: ${(err as Error).message}`, usage);
  }
}
