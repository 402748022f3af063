import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportedApi } from '../src/index.js';

// Each published package's exported names and kinds, read from each entry it publishes (`.` and
// every subpath with types, such as core's `./parse`), against the committed list in
// api/<dir>.json (a subpath: api/<dir>.<subpath>.json). An export added or removed by accident fails here; one
// added on purpose is written with `USP_UPDATE_API=1 npx vitest run` (in tools/api-surface) and
// the changed list is reviewed with the change. Each README's "## API" table must list the same.
const ROOT = join(import.meta.dirname, '..', '..', '..');
const PACKAGES = join(ROOT, 'packages');
const API = join(import.meta.dirname, '..', 'api');

interface Manifest {
  readonly name: string;
  readonly private?: boolean;
  readonly exports: Record<string, { readonly types?: string } | string>;
}

const published = readdirSync(PACKAGES)
  .map((dir) => ({
    dir,
    manifest: JSON.parse(readFileSync(join(PACKAGES, dir, 'package.json'), 'utf8')) as Manifest,
  }))
  .filter(({ manifest }) => manifest.private !== true);

/** Every typed entry of every published package, with the name of its committed list. */
const entries = published.flatMap(({ dir, manifest }) =>
  Object.entries(manifest.exports)
    .filter(([key, entry]) => key === '.' || (typeof entry === 'object' && entry.types !== undefined))
    .map(([key]) => ({
      dir,
      manifest,
      key,
      list: key === '.' ? `${dir}.json` : `${dir}.${key.slice(2)}.json`,
    })),
);

const apis = new Map<string, Record<string, string>>();

/** The exported names and kinds of one built entry of a package (read once per test run). */
function apiOf(dir: string, key = '.'): Record<string, string> {
  let api = apis.get(`${dir} ${key}`);
  if (api === undefined) {
    const entry = published.find((p) => p.dir === dir)?.manifest.exports[key];
    const types = typeof entry === 'object' ? entry.types : undefined;
    if (types === undefined) throw new Error(`${dir}: exports['${key}'] has no types`);
    api = exportedApi(join(PACKAGES, dir, types));
    apis.set(`${dir} ${key}`, api);
  }
  return api;
}

describe('the public API of each published package', () => {
  it('every published entry has a committed list, and every list an entry', () => {
    const lists = readdirSync(API).filter((f) => f.endsWith('.json'));
    expect(lists.sort()).toEqual(entries.map(({ list }) => list).sort());
  });

  for (const { dir, manifest, key, list } of entries) {
    const entry = key === '.' ? manifest.name : `${manifest.name}/${key.slice(2)}`;
    it(`${entry} exports what api/${list} lists`, () => {
      const actual = apiOf(dir, key);
      const file = join(API, list);
      if (process.env.USP_UPDATE_API === '1') writeFileSync(file, `${JSON.stringify(actual, null, 2)}\n`);
      const expected = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as unknown) : {};
      expect(actual).toEqual(expected);
    });
  }

  for (const { dir, manifest } of published) {
    it(`${manifest.name}'s README lists its API in a table`, () => {
      const readme = readFileSync(join(PACKAGES, dir, 'README.md'), 'utf8');
      const start = readme.indexOf('\n## API\n');
      expect(start, 'a "## API" section').toBeGreaterThanOrEqual(0);
      const end = readme.indexOf('\n## ', start + 1);
      const section = readme.slice(start, end < 0 ? undefined : end);
      const rows = [...section.matchAll(/^\| `([^`]+)` +\| ([a-z]+) +\|/gm)].map((m) => `${m[1]} ${m[2]}`);
      // A package that re-exports all of core may link core's table instead of repeating it.
      const core = section.includes('(https://www.npmjs.com/package/@usp-ts/core#api)') ? apiOf('core') : {};
      const own = Object.entries(apiOf(dir)).filter(([name, kind]) => core[name] !== kind);
      expect(rows.sort()).toEqual(own.map(([name, kind]) => `${name} ${kind}`).sort());
    });
  }
});
