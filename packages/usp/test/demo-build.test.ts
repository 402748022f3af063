import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

// `pnpm usp` (the demo's entry from a clone) builds what the CLI runs on, and no test-only
// workspace package: usp's devDependencies and what they bring would otherwise be compiled
// before the first `usp demo`.

const root = fileURLToPath(new URL('../../..', import.meta.url));

it('builds usp and its run-time workspace packages, none of the test-only ones', async () => {
  const r = spawnSync(process.execPath, [`${root}scripts/build-cli.mjs`, '--dry=json'], {
    cwd: root,
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  const built = [
    ...new Set((JSON.parse(r.stdout) as { tasks: { package: string }[] }).tasks.map((t) => t.package)),
  ];
  const { runtimeClosure } = (await import(`${root}scripts/build-cli.mjs`)) as {
    runtimeClosure: (name: string) => string[];
  };
  expect(built.sort()).toEqual(runtimeClosure('usp'));
  expect(built).toContain('@usp-ts/core');
  expect(built).toContain('@usp-ts/fetcher');
  for (const testOnly of ['@usp-ts/testkit', '@usp-ts/test-server', '@usp-ts/conformance']) {
    expect(built).not.toContain(testOnly);
  }
});
