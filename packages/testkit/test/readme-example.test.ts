// The made-up extension and its 20-line test shown in the README, kept here so they stay true.
import type { XmlExtension } from '@usp-ts/core';
import { expect, it } from 'vitest';
import { describeFormatKit, extensionHost, runExtension, wrapEntries } from '../src/index.js';

// --- README extension starts ---
declare module '@usp-ts/core' {
  interface PageExtensions {
    minutes?: number;
  }
}

export const RECIPE_NS = 'https://example.com/schemas/recipe/1.0';

/** Reads `<recipe:minutes>` into `page.extensions.minutes`. */
export const recipe = (): XmlExtension => ({
  name: 'recipe',
  namespaces: [RECIPE_NS],
  create: (ctx) => ({
    open() {},
    close(el, text, draft) {
      if (el.local !== 'minutes') return;
      const minutes = Number(text);
      if (Number.isInteger(minutes)) draft.extensions = { ...draft.extensions, minutes };
      else ctx.warn('invalid-value', `Bad <recipe:minutes>: ${text}`);
    },
  }),
});
// --- README extension ends ---

// --- README test starts ---
const NS = { r: RECIPE_NS };
const entries = '<entry><loc>https://example.com/soup</loc><r:minutes>25</r:minutes></entry>';

it('reads the cooking time and warns on a bad one', async () => {
  const { pages } = await runExtension(recipe(), entries, { namespaces: NS });
  expect(pages[0].extensions?.minutes).toBe(25);
  const bad = await runExtension(recipe(), entries.replace('25', 'soon'), { namespaces: NS });
  expect(bad.warnings.map((w) => w.code)).toEqual(['invalid-value']);
  expect(bad.pages[0].extensions?.minutes).toBeUndefined();
});

// Arbitrary and mutated input never throws, chunking and gzip change nothing, a cut keeps a
// prefix of the pages, namespace prefixes can be renamed.
describeFormatKit({
  name: 'my-usp-recipe',
  plugins: [extensionHost([recipe()])],
  samples: [{ name: 'recipes', url: 'https://example.com/s.xml', input: wrapEntries(entries, NS) }],
});
// --- README test ends ---
