import type { Registry, RegistryLoader } from '@usp-ts/core';

let loaded: Promise<Registry> | undefined;

/**
 * The default formats (`createDefaultRegistry`), imported when a site first has a document to
 * parse: a batch run where nothing changed parses nothing, and importing the eight format and
 * extension packages was ~50 M instructions before its first request. One registry a process.
 */
export const loadDefaultRegistry: RegistryLoader = () => {
  loaded ??= import('../plugins/defaults.js').then((m) => m.createDefaultRegistry());
  return loaded;
};
