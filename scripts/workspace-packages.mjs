// The published packages, found by globbing packages/* (a directory with a package.json that is
// not "private"), so that a package added there is released, synced and checked without being
// listed anywhere. Shared by the root scripts that guard the release.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const root = new URL('..', import.meta.url).pathname;

/** The package every plugin takes as a peer; `usp` is the one that depends on it directly. */
export const CORE = '@usp-ts/core';
export const MAIN = 'usp';

export function readJson(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** Written the way the repository's package.json files are: two spaces, a final newline. */
export function writeJson(path, value) {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

export function rootManifest(base = root) {
  return readJson(join(base, 'package.json'));
}

/** Every workspace package under packages/ and tools/, private ones included. */
export function workspacePackages(base = root) {
  const out = [];
  for (const group of ['packages', 'tools']) {
    const groupDir = join(base, group);
    if (!existsSync(groupDir)) continue;
    for (const name of readdirSync(groupDir).sort()) {
      const dir = join(groupDir, name);
      const manifestPath = join(dir, 'package.json');
      if (!existsSync(manifestPath)) continue;
      out.push({ dir, relativeDir: `${group}/${name}`, manifestPath, manifest: readJson(manifestPath) });
    }
  }
  return out;
}

/** The packages that are published: packages/* without `"private": true`. */
export function publishedPackages(base = root) {
  return workspacePackages(base).filter((p) => p.relativeDir.startsWith('packages/') && !p.manifest.private);
}

/** A pnpm command line at the version the root manifest pins (corepack is not relied on). */
export function pnpm(...args) {
  return ['npx', '-y', rootManifest().packageManager, ...args];
}
