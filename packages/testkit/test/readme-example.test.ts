// The 20-line test of a made-up extension (./recipe.ts) shown in the README, kept here so it stays true.
import { expect, it } from 'vitest';
import { describeFormatKit, extensionHost, runExtension, wrapEntries } from '../src/index.js';
import { RECIPE_NS, recipe } from './recipe.js';

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
