import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  importPlugins,
  PluginModuleError,
  registryWithPlugins,
  resolvePluginModule,
} from '../src/plugins/modules.js';
import { createWorkerParser } from '../src/worker/pool.js';

// Plugin modules as `--plugin` and `pluginModules` load them, in this thread and in a worker.

const workerUrl = new URL('../dist/worker/worker.js', import.meta.url);
const RECIPE = 'https://example.com/schemas/recipe/1.0';
const EXTENSION = `{
  name: 'recipe',
  namespaces: [${JSON.stringify(RECIPE)}],
  create: () => ({
    open() {},
    close(el, text, draft) {
      if (el.local === 'minutes') draft.extensions = { ...draft.extensions, minutes: Number(text) };
    },
  }),
}`;
const XML = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:r="${RECIPE}"><url><loc>https://example.com/soup</loc><r:minutes>25</r:minutes></url></urlset>`;

let dir: string;
const url = (name: string) => pathToFileURL(join(dir, name)).href;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'usp-plugin-modules-'));
  writeFileSync(join(dir, 'factory.mjs'), `export default () => [${EXTENSION}];\n`);
  writeFileSync(join(dir, 'single.mjs'), `export default ${EXTENSION};\n`);
  writeFileSync(join(dir, 'named.mjs'), `export const recipe = ${EXTENSION};\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('plugin modules', () => {
  it('take a factory or a value, one plugin or a list, and sort formats from extensions', async () => {
    for (const name of ['factory.mjs', 'single.mjs']) {
      const loaded = await importPlugins([url(name)]);
      expect(loaded.formats).toEqual([]);
      expect(loaded.extensions.map((e) => e.name)).toEqual(['recipe']);
    }
    await expect(importPlugins([url('named.mjs')])).rejects.toThrow(PluginModuleError);
    await expect(importPlugins([url('named.mjs')])).rejects.toThrow('has no default export');
    const registry = registryWithPlugins(await importPlugins([url('factory.mjs')]));
    expect(registry.plugins.map((p) => p.name)).toContain('xml-sitemap');
  });

  it('resolve paths against the working directory and leave URLs alone', () => {
    expect(resolvePluginModule('./factory.mjs', dir)).toBe(url('factory.mjs'));
    expect(resolvePluginModule(join(dir, 'factory.mjs'), '/')).toBe(url('factory.mjs'));
    expect(resolvePluginModule(url('x.mjs'))).toBe(url('x.mjs'));
    expect(() => resolvePluginModule('no-such-package-usp', dir)).toThrow(PluginModuleError);
  });

  it('are loaded by the parse workers: a document parsed on a worker has the extension data', async () => {
    const registry = registryWithPlugins(await importPlugins([url('factory.mjs')]));
    const parse = async (pluginModules: string[]) => {
      const pool = createWorkerParser({ workerUrl, inlineBelowBytes: 0, workers: 1, pluginModules });
      try {
        const pages: { extensions?: { minutes?: number } }[] = [];
        await pool.parse({
          url: 'https://example.com/s.xml',
          body: new TextEncoder().encode(XML),
          registry,
          onPages: (batch) => void pages.push(...(batch as typeof pages)),
        });
        return pages;
      } finally {
        await pool.close();
      }
    };
    expect((await parse([url('factory.mjs')]))[0].extensions?.minutes).toBe(25);
    // Without the module the worker parses with the default formats only.
    expect((await parse([]))[0].extensions).toBeUndefined();
  });
});
