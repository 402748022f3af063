// `changeset status` as CI runs it: every changed published package needs a changeset. It
// compares with the base branch `main`; a checkout without a local `main` (a CI job on another
// branch, a detached HEAD) compares with `origin/main`, and failing that with HEAD, which still
// checks that every changeset in .changeset/ parses and names real packages.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const root = new URL('..', import.meta.url).pathname;
const git = (...args) => spawnSync('git', args, { cwd: root, encoding: 'utf8' });

if (git('rev-parse', '--is-inside-work-tree').status !== 0) {
  console.log('changeset status: not a git checkout, skipped');
  process.exit(0);
}
const has = (ref) => git('rev-parse', '--verify', '--quiet', `${ref}^{commit}`).status === 0;
const args = ['status'];
if (!has('main')) args.push(`--since=${has('origin/main') ? 'origin/main' : 'HEAD'}`);

const bin = createRequire(`${root}package.json`).resolve('@changesets/cli/bin.js');
const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
