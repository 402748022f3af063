import {
  compareToGolden,
  formatDifferences,
  hasCorpus,
  loadCases,
  missingCorpusMessage,
  readCase,
  serveSiteCase,
} from '@usp-ts/conformance';
import { describe, expect, it } from 'vitest';
import { runCli } from './cli-helpers.js';

// The corpus's site cases with normalize_homepage_url=False, through `usp ls -f json
// --no-normalize-homepage`: their homepage is `/foo/bar`, which usp walks as `/foo/bar/`.

const cases = loadCases({ kind: 'site' }).filter((c) => c.meta.options?.normalize_homepage_url === false);

/** usp's keyword arguments as `usp ls` flags. */
function flags(o: NonNullable<ReturnType<typeof readCase>['meta']['options']>): string[] {
  const args = ['--no-normalize-homepage'];
  if (o.use_robots === false) args.push('--no-robots');
  if (o.use_known_paths === false) args.push('--no-known');
  for (const p of o.extra_known_paths ?? []) args.push('--extra-known-path', p);
  return args;
}

describe.skipIf(!hasCorpus())('conformance: normalize_homepage_url=False site cases through usp ls', () => {
  it('has the three cases', () => {
    expect(cases.map((c) => c.name).sort()).toEqual([
      'site-opt-normalize-disabled-extra-paths',
      'site-opt-normalize-homepage-disabled',
      'site-opt-skip-robots',
    ]);
  });

  for (const info of cases) {
    it(info.name, async () => {
      const c = readCase(info.name);
      const server = await serveSiteCase(info.name);
      try {
        expect(server.homepage).toMatch(/\/foo\/bar$/);
        const r = await runCli([
          'ls',
          '-f',
          'json',
          '--allow-private-networks',
          ...flags(c.meta.options ?? {}),
          server.homepage,
        ]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toContain(`usp: note: --no-normalize-homepage: walking ${server.homepage}/`);
        const result = compareToGolden(JSON.parse(r.stdout), c.expected, {
          siteCase: true,
          port: server.port,
          ignoreDates: c.meta.depends_on_current_date === true,
          expectedAlternates: c.expectedAlternates,
        });
        expect(result.ok, formatDifferences(result)).toBe(true);
      } finally {
        await server.close();
      }
    });
  }
});

describe.skipIf(hasCorpus())('conformance: normalize_homepage_url=False site cases (corpus missing)', () => {
  it.skip(missingCorpusMessage(), () => {});
});
