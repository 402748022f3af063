import type { OptionSpec } from './args.js';

// The `--plugin` flag alone, without the plugin loader: `usp batch` and `usp worker` list it
// without importing the formats (they load the loader only when the flag is given).

/** `--plugin MODULE`, shared by `ls`, `parse`, `validate`, `report`, `batch` and `worker`. */
export const PLUGIN_OPTIONS = {
  plugin: { type: 'string', multiple: true },
} satisfies OptionSpec;

export const PLUGIN_HELP = `  --plugin MODULE           load a plugin: an ES module (package name, or path with ./) whose
                            default export is a plugin factory or a list of formats and
                            extensions, added to the default ones (repeatable); parse workers
                            load it too`;

/** `--plugin` in the help of the commands that walk many sites. */
export const SITE_RUN_PLUGIN_HELP = `  --plugin MODULE           load a plugin, as usp ls --plugin does: its formats and extensions
                            are added to the default ones for every site (repeatable); loaded
                            once, at start, so a module that cannot be loaded is a usage error`;
