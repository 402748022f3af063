// Builds what the usp CLI runs on, and nothing else: usp and the workspace packages it depends on
// at run time (dependencies, optional and peer dependencies, followed through), in dependency order.
// `turbo --filter=usp...` would also build usp's devDependencies (the test kits, the test server,
// the conformance corpus reader) before the first `pnpm usp demo`. Extra arguments go to turbo
// (`--dry=json` lists the tasks without running them).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { workspacePackages } from './workspace-packages.mjs';

/** Names of `start` and every workspace package it needs at run time. */
export function runtimeClosure(start, packages = workspacePackages()) {
  const byName = new Map(packages.map((p) => [p.manifest.name, p.manifest]));
  const seen = new Set();
  const visit = (name) => {
    if (seen.has(name) || !byName.has(name)) return;
    seen.add(name);
    const m = byName.get(name);
    for (const dep of Object.keys({ ...m.dependencies, ...m.optionalDependencies, ...m.peerDependencies }))
      visit(dep);
  };
  visit(start);
  return [...seen].sort();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = new URL('..', import.meta.url).pathname;
  const turbo = createRequire(`${root}package.json`).resolve('turbo/bin/turbo');
  const filters = runtimeClosure('usp').map((name) => `--filter=${name}`);
  const extra = process.argv.slice(2);
  const r = spawnSync(process.execPath, [turbo, 'run', 'build', ...filters, '--only', ...extra], {
    cwd: root,
    // The CLI's output is stdout: the build speaks on stderr.
    stdio: ['inherit', extra.some((a) => a.startsWith('--dry')) ? 'inherit' : 2, 'inherit'],
  });
  process.exit(r.status ?? 1);
}
