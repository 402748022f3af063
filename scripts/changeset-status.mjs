// `changeset status` as CI runs it: every changed published package needs a changeset. It
// compares with the base branch `main`; a checkout without a local `main` (a CI job on another
// branch, a detached HEAD) compares with `origin/main`, and failing that with HEAD, which still
// checks that every changeset in .changeset/ parses and names real packages.
// Also refuses a release plan that leaves 0.x: before 1.0 a breaking change is a minor bump
// (0.1.0 -> 0.2.0), and a `major` changeset would make the whole fixed group 1.0.0.
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

const requireCli = createRequire(
  createRequire(`${root}package.json`).resolve('@changesets/cli/package.json'),
);
// Its report (a line per package, per bump) is printed only when it fails: a passing run is one
// line of ours, not twenty of changesets'.
const r = spawnSync(process.execPath, [requireCli.resolve('./bin.js'), ...args], {
  cwd: root,
  encoding: 'utf8',
});
if (r.status !== 0) {
  process.stdout.write(r.stdout ?? '');
  process.stderr.write(r.stderr ?? '');
  process.exit(r.status ?? 1);
}

const { default: getReleasePlan } = requireCli('@changesets/get-release-plan');
const plan = await getReleasePlan(root);
const leaving = plan.releases.filter(
  (x) => x.oldVersion?.startsWith('0.') && !x.newVersion?.startsWith('0.'),
);
if (leaving.length > 0) {
  const from = plan.changesets.filter((c) => c.releases.some((x) => x.type === 'major')).map((c) => c.id);
  console.error(
    `changeset status: this plan releases ${leaving.length} packages at ${leaving[0].newVersion}; ` +
      `on 0.x a breaking change is \`minor\` (major in: ${from.map((id) => `.changeset/${id}.md`).join(', ')})`,
  );
  process.exit(1);
}
const released = plan.releases.filter((x) => x.type !== 'none');
const bumps = [...new Set(released.map((x) => x.type))].join(', ') || 'nothing';
console.log(
  `changeset status: ${plan.changesets.length} changesets, ${released.length} packages to release (${bumps})`,
);
