// `pnpm release [--dry-run] [--skip-tests]`: publishes every published package from a scratch
// checkout of HEAD, so what is uploaded is the committed state built from clean (no stale dist/
// file, no uncommitted edit). In that checkout: install from the lockfile, build (turbo --force),
// typecheck, test, lint, the conformance and pack checks, then `changeset publish`.
// `--dry-run` does all of it but the upload, and first applies the pending changesets there
// (`version-packages`), so the plan it prints has the versions the release will have; the real
// run wants that step committed already. `--skip-tests` (dry run only) shows the plan sooner.
// Steps and why: CONTRIBUTING.md, "Releasing".
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pnpm, publishedPackages, readJson, root } from './workspace-packages.mjs';

const dryRun = process.argv.includes('--dry-run');
const skipTests = process.argv.includes('--skip-tests');

class ReleaseStop extends Error {}

/** Stops the release; the scratch checkout is still removed. */
function fail(message) {
  throw new ReleaseStop(message);
}

function step(title) {
  console.log(`\n== ${title}`);
}

/** Runs a command to its end with its output shown; stops the release when it fails. */
function run(cwd, [command, ...args], env = {}) {
  const r = spawnSync(command, args, { cwd, stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.status !== 0) fail(`\`${[command, ...args].join(' ')}\` failed (exit ${r.status ?? r.signal})`);
}

const git = (...args) => spawnSync('git', args, { cwd: root, encoding: 'utf8' });

const pendingChangesets = (dir) =>
  readdirSync(join(dir, '.changeset')).filter((f) => f.endsWith('.md') && f !== 'README.md');

try {
  await release();
} catch (e) {
  if (!(e instanceof ReleaseStop)) throw e;
  console.error(`release: ${e.message}`);
  process.exitCode = 1;
}

async function release() {
  if (skipTests && !dryRun) fail('--skip-tests is for --dry-run only: a release runs every test');
  if (!dryRun && spawnSync('pnpm', ['--version']).status !== 0)
    fail('`changeset publish` calls `pnpm`, which is not on PATH: run `npx -y pnpm@12.4.2 release`');
  if (git('status', '--porcelain').stdout.trim() !== '') {
    if (!dryRun) fail('the working tree has uncommitted changes: a release publishes a commit');
    console.warn('release: uncommitted changes are not part of the dry run (it checks out HEAD)');
  }
  if (!dryRun && pendingChangesets(root).length > 0) {
    fail(
      `${pendingChangesets(root).length} pending changesets: run \`pnpm version-packages\`, ` +
        'review the versions and CHANGELOGs, commit, then `pnpm release`',
    );
  }

  const head = git('rev-parse', '--short', 'HEAD').stdout.trim();
  const scratch = mkdtempSync(join(tmpdir(), 'usp-release-'));
  const checkout = join(scratch, 'checkout');
  // The corpus lives beside the repository, not beside the scratch checkout.
  const env = { USP_SHARED_DIR: process.env.USP_SHARED_DIR ?? join(root, '..', 'shared') };

  try {
    step(`scratch checkout of ${head}`);
    if (git('worktree', 'add', '--detach', checkout, 'HEAD').status !== 0) fail('git worktree add failed');
    run(checkout, pnpm('install', '--frozen-lockfile', '--prefer-offline'));

    if (dryRun && pendingChangesets(checkout).length > 0) {
      step(`versions from ${pendingChangesets(checkout).length} pending changesets (version-packages)`);
      run(checkout, [process.execPath, 'scripts/version-packages.mjs']);
    }

    step('build from clean');
    run(checkout, ['npx', 'turbo', 'run', 'build', '--force', '--output-logs=errors-only']);
    if (!skipTests) {
      step('typecheck and test');
      run(checkout, ['npx', 'turbo', 'run', 'typecheck', 'test', '--continue', '--concurrency=2'], env);
      run(checkout, [process.execPath, 'scripts/check-differences.mjs'], env);
    }
    step('lint');
    run(checkout, ['npx', 'biome', 'check', '.']);

    step('pack check (the publish plan)');
    run(checkout, [
      process.execPath,
      'scripts/check-pack.mjs',
      '--release',
      ...(dryRun ? ['--dry-run'] : []),
    ]);

    if (dryRun) {
      step('changelogs');
      for (const pkg of publishedPackages(checkout)) {
        const changelog = join(pkg.dir, 'CHANGELOG.md');
        if (!existsSync(changelog)) continue;
        const latest = readFileSync(changelog, 'utf8').split(/^## /m)[1] ?? '';
        const [version, ...lines] = latest
          .trim()
          .split('\n')
          .filter((l) => l.trim() !== '');
        console.log(`${pkg.manifest.name} ${version}:\n  ${lines.join('\n  ')}`);
      }
      const versions = new Set(publishedPackages(checkout).map((p) => readJson(p.manifestPath).version));
      step(
        `dry run: would publish ${publishedPackages(checkout).length} packages at ${[...versions].join(', ')}`,
      );
      console.log('nothing was published; see CONTRIBUTING.md, "Releasing", for the real run');
    } else {
      step('publish');
      // Publishes each package whose version is not on npm yet, and tags the commit (name@version).
      run(checkout, ['npx', 'changeset', 'publish']);
      console.log('\npublished; push the tags: git push --follow-tags');
    }
  } finally {
    git('worktree', 'remove', '--force', checkout);
    rmSync(scratch, { recursive: true, force: true });
  }
}
