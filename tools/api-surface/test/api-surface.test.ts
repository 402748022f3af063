import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportedApi } from '../src/index.js';

// Each published package's exported names and kinds, read from the entry it publishes, against
// the committed list in api/<dir>.json. An export added or removed by accident fails here; one
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

const apis = new Map<string, Record<string, string>>();

/** The exported names and kinds of a package's built entry (read once per test run). */
function apiOf(dir: string): Record<string, string> {
  let api = apis.get(dir);
  if (api === undefined) {
    const entry = published.find((p) => p.dir === dir)?.manifest.exports['.'];
    const types = typeof entry === 'object' ? entry.types : undefined;
    if (types === undefined) throw new Error(`${dir}: exports['.'] has no types`);
    api = exportedApi(join(PACKAGES, dir, types));
    apis.set(dir, api);
  }
  return api;
}

describe('the public API of each published package', () => {
  it('every published package has a committed list, and every list a package', () => {
    const lists = readdirSync(API).filter((f) => f.endsWith('.json'));
    expect(lists.sort()).toEqual(published.map(({ dir }) => `${dir}.json`).sort());
  });

  for (const { dir, manifest } of published) {
    it(`${manifest.name} exports what api/${dir}.json lists`, () => {
      const actual = apiOf(dir);
      const file = join(API, `${dir}.json`);
      if (process.env.USP_UPDATE_API === '1') writeFileSync(file, `${JSON.stringify(actual, null, 2)}\n`);
      const expected = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as unknown) : {};
      expect(actual).toEqual(expected);
    });

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
