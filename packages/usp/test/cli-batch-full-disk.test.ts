import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type SiteFarm, startSiteFarm } from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli-helpers.js';

// A batch whose --out fills up: on a real 2 MiB tmpfs where this process may mount one (root
// with CAP_SYS_ADMIN, as in CI's container here), else on an emulated one (small-disk.mjs: the
// same short write, then ENOSPC, from inside the process). Which one ran is in the test's name.
const root = mkdtempSync(join(tmpdir(), 'usp-full-disk-'));
const mountPoint = join(root, 'disk');
mkdirSync(mountPoint);

function tryMount(): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mountPoint], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}
const mounted = process.platform === 'linux' && tryMount();
const PRELOAD = fileURLToPath(new URL('./small-disk.mjs', import.meta.url));

let farm: SiteFarm;
beforeAll(async () => {
  // About 6 MB of page rows: three times the disk.
  farm = await startSiteFarm({ sites: 30, seed: 11, octet: 83, pages: [400, 1200] });
});
afterAll(async () => {
  await farm?.close();
  if (mounted) execFileSync('umount', [mountPoint]);
  rmSync(root, { recursive: true, force: true });
});

const lines = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { site: string; url: string; sitemap: string });

describe(`usp batch on a full disk (${mounted ? 'a real 2 MiB tmpfs' : 'an emulated 2 MiB disk: mount was refused'})`, () => {
  it('stops with one line and exit 1, and --resume after space is freed ends with every site and page once', async () => {
    const sites = join(root, 'sites.txt');
    writeFileSync(sites, farm.sitesFile());
    const out = join(mountPoint, 'out');
    const state = join(root, 'state.sqlite');
    const args = [
      'batch',
      '--out',
      out,
      '--state',
      state,
      '--sites',
      '4',
      '--allow-private-networks',
      '--timeout',
      '1500ms',
      '--retries',
      '1',
      '--site-deadline',
      '4s',
      sites,
    ];
    const env: Record<string, string> = mounted
      ? {}
      : {
          NODE_OPTIONS: `--import=${PRELOAD}`,
          USP_SMALL_DISK_DIR: mountPoint,
          USP_SMALL_DISK_BYTES: String(2 * 1024 * 1024),
        };
    const full = await runCli(args, { env });
    expect(full.code, full.stderr).toBe(1);
    expect(full.stderr.trim().split('\n')).toHaveLength(1);
    expect(full.stderr).toMatch(/^usp: error: no space left on the device of .*--resume\n$/);
    // What the journal calls written is there, whole.
    const journal = lines(join(out, 'journal.ndjson')) as unknown as { offsets?: Record<string, number> }[];
    const last = journal.at(-1)?.offsets ?? { pages: 0, sitemaps: 0, sites: 0 };
    for (const f of ['pages', 'sitemaps', 'sites']) {
      expect(statSync(join(out, `${f}.ndjson`)).size).toBeGreaterThanOrEqual(last[f]);
    }
    expect(journal.length - 1).toBeLessThan(farm.sites.length);

    // Space freed: the same file system, larger.
    if (mounted) execFileSync('mount', ['-o', 'remount,size=64m', mountPoint]);
    const resumed = await runCli([...args, '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const siteRows = lines(join(out, 'sites.ndjson')).map((s) => s.site);
    expect(siteRows.sort()).toEqual(farm.sites.map((s) => s.homepage).sort());
    const pages = lines(join(out, 'pages.ndjson'));
    const keys = pages.map((p) => `${p.sitemap} ${p.url}`);
    expect(keys.length).toBe(new Set(keys).size);
    expect(new Set(pages.map((p) => p.url))).toEqual(farm.allPages());
  });
});
