import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

// `pnpm usp` (the demo's entry from a clone) builds what the CLI runs on, and no test-only
// workspace package: usp's devDependencies and what they bring would otherwise be compiled
// before the first `usp demo`.

const root = fileURLToPath(new URL('../../..', import.meta.url));
const manifest = (dir: string) => JSON.parse(readFileSync(`${root}${dir}/package.json`, 'utf8'));

it('builds exactly usp and the workspace packages it depends on at run time', () => {
  const script: string = manifest('.').scripts.usp;
  const turboArgs = script.split('&&')[0].trim().split(/\s+/).slice(1);
  expect(turboArgs.slice(0, 2)).toEqual(['run', 'build']);
  const r = spawnSync(
    process.execPath,
    [
      `${root}node_modules/turbo/bin/turbo`,
      ...turboArgs.filter((a) => !a.startsWith('--output-logs') && a !== '1>&2'),
      '--dry=json',
    ],
    { cwd: root, encoding: 'utf8' },
  );
  expect(r.status, r.stderr).toBe(0);
  const built = new Set(
    (JSON.parse(r.stdout) as { tasks: { package: string }[] }).tasks.map((t) => t.package),
  );
  const runtime = new Set<string>(['usp']);
  for (const name of Object.keys(manifest('packages/usp').dependencies)) {
    if (name.startsWith('@usp-ts/')) runtime.add(name);
  }
  expect([...built].sort()).toEqual([...runtime].sort());
});
