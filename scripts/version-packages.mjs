// The version step of a release (`pnpm version-packages`): `changeset version`, then what it
// does not do for this repository:
// - the shared manifest fields follow the new versions (core's peer range, sync-package-fields);
// - a package's first release gets a changelog that says what the package is. Its pending
//   changesets describe the steps of its development before anyone could install it, which
//   mean nothing to a reader of version 0.1.0;
// - a later version without changes to a package says so instead of an empty heading.
// `--cwd DIR` runs it on another checkout (the release dry run uses a scratch copy).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { publishedPackages, readJson, root as repoRoot } from './workspace-packages.mjs';

const cwdFlag = process.argv.indexOf('--cwd');
const root = cwdFlag === -1 ? repoRoot : resolve(process.argv[cwdFlag + 1]);

const unreleased = publishedPackages(root).filter((p) => p.manifest.version === '0.0.0');

const bin = createRequire(join(repoRoot, 'package.json')).resolve('@changesets/cli/bin.js');
const run = (args) => {
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};
run([bin, 'version']);

for (const pkg of unreleased) {
  const { name, version, description } = readJson(pkg.manifestPath);
  if (version === '0.0.0') continue; // no changeset names it yet
  writeFileSync(
    join(pkg.dir, 'CHANGELOG.md'),
    `# ${name}\n\n## ${version}\n\nInitial release. ${description}\n`,
  );
}

// The fixed group gives every package the new version; one without changes of its own would
// otherwise show an empty heading.
for (const pkg of publishedPackages(root)) {
  const changelog = join(pkg.dir, 'CHANGELOG.md');
  if (!existsSync(changelog)) continue;
  const { version } = readJson(pkg.manifestPath);
  const text = readFileSync(changelog, 'utf8');
  const empty = `## ${version}\n\n## `;
  if (text.includes(empty))
    writeFileSync(
      changelog,
      text.replace(empty, `## ${version}\n\nNo changes of its own: released with the other packages.\n\n## `),
    );
}

run([join(repoRoot, 'scripts', 'sync-package-fields.mjs'), '--root', root]);
