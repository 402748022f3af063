// Writes the shared manifest fields (package-fields.mjs) into every published package from the
// root package.json: run it after changing `repository`, `author`, `license` or `engines` there,
// after adding a package, and after `changeset version` (the root `version-packages` script does).
// `--check` only reports and exits 1 when a package differs; `--root DIR` works on another checkout.
import { join, resolve } from 'node:path';
import { expectedManifest, fieldDifferences } from './package-fields.mjs';
import { CORE, publishedPackages, root as repoRoot, rootManifest, writeJson } from './workspace-packages.mjs';

const checkOnly = process.argv.includes('--check');
const rootFlag = process.argv.indexOf('--root');
const root = rootFlag === -1 ? repoRoot : resolve(process.argv[rootFlag + 1]);
const packages = publishedPackages(root);
const core = packages.find((p) => p.manifest.name === CORE);
if (!core) throw new Error(`${CORE} is not under ${join(root, 'packages')}`);
const context = { rootManifest: rootManifest(root), coreVersion: core.manifest.version };

let differing = 0;
for (const pkg of packages) {
  const expected = expectedManifest(pkg.manifest, { ...context, relativeDir: pkg.relativeDir });
  const fields = fieldDifferences(pkg.manifest, expected);
  if (checkOnly) {
    if (fields.length > 0)
      console.error(`${pkg.manifest.name}: ${fields.join(', ')} differ from the root setting`);
  } else if (JSON.stringify(expected) !== JSON.stringify(pkg.manifest)) {
    writeJson(pkg.manifestPath, expected); // also puts the keys in order
  }
  if (fields.length > 0) differing++;
}
if (checkOnly && differing > 0) {
  console.error('run `pnpm packages:sync` to write them');
  process.exit(1);
}
console.log(
  checkOnly
    ? `sync-package-fields: ${packages.length} packages match the root setting`
    : `sync-package-fields: ${differing} of ${packages.length} packages updated`,
);
