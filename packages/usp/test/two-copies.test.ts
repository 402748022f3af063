// Two copies of core in one install, as npm lays them out when `usp` was installed with one
// version of core and a plugin later with another: usp and its formats under
// node_modules/usp/node_modules on core A, the plugin at the top on core B (issue 20). Everything
// is installed from packed tarballs (`pnpm pack`, what `pnpm publish` uploads), core B being the
// same build packed again under another version. A child process then walks a local site with
// usp's default formats around the top-level video extension and reports what crossed the copies.
import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastJsonLine, runNode, startTestServer, type TestServer } from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
/** Core A is the workspace's build at its own version (0.0.0 before the first release). */
const CORE_A_VERSION = JSON.parse(
  readFileSync(join(repo, 'packages', 'core', 'package.json'), 'utf8'),
).version;
const CORE_B_VERSION = '0.99.0';

const CHILD = `
import { createRequire } from 'node:module';
import * as usp from 'usp';
import * as coreB from '@usp-ts/core';
import { googleVideo } from '@usp-ts/ext-google-video';

const requireFromUsp = createRequire(createRequire(import.meta.url).resolve('usp'));
const out = {
  coreA: requireFromUsp('@usp-ts/core/package.json').version,
  coreB: createRequire(import.meta.url)('@usp-ts/core/package.json').version,
  distinctClasses: usp.SitemapDate !== coreB.SitemapDate,
};

// The top-level extension (core B) inside usp's own XML format (core A).
const registry = usp.createRegistry([
  usp.robotsTxt(),
  usp.plainText(),
  usp.xmlSitemap({ extensions: [googleVideo()] }),
]);
const tree = await usp.sitemapTreeForHomepage(process.argv[2], { registry, parseWorkers: 0 });
const page = [...tree.allPages()][0];
const date = page?.extensions?.videos?.[0]?.publicationDate;
out.pages = [...tree.allPages()].length;
out.dateType = typeof date;
out.dateIso = date?.toISOString?.() ?? String(date);
out.dateIsA = date instanceof usp.SitemapDate;
out.dateIsB = date instanceof coreB.SitemapDate;
out.indexByB = coreB.isIndexSitemap(tree);
out.rootIsBWebsite = tree instanceof coreB.IndexWebsiteSitemap;
out.rootIsBInvalid = tree instanceof coreB.InvalidSitemap;
out.pagesNodeByB = [...tree.allSitemaps()].some((s) => coreB.isPagesSitemap(s));

try {
  coreB.createRegistry([usp.robotsTxt(), usp.robotsTxt()]);
} catch (e) {
  out.conflictIsA = e instanceof usp.PluginConflictError;
  out.conflictIsAUspError = e instanceof usp.UspError;
  out.conflictIsAOption = e instanceof usp.InvalidOptionError;
  out.conflictCode = e.code;
}
try {
  await usp.sitemapTreeForHomepage('not a url');
} catch (e) {
  out.urlErrorIsB = e instanceof coreB.InvalidUrlError;
  out.urlErrorIsBUspError = e instanceof coreB.UspError;
}
console.log(JSON.stringify(out));
`;

function sh(command: string, args: string[], cwd: string): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function extract(tarball: string, into: string): void {
  mkdirSync(into, { recursive: true });
  sh('tar', ['-xzf', tarball, '-C', into, '--strip-components=1'], into);
}

let scratch = '';
let server: TestServer;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'usp-two-copies-'));
  const packs = join(scratch, 'packs');
  mkdirSync(packs);
  // usp and what it depends on at run time, packed as for publishing.
  const pnpm = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).packageManager as string;
  sh('npx', ['-y', pnpm, '-r', '--filter-prod', 'usp...', 'pack', '--pack-destination', packs], repo);

  const tarballs = new Map<string, string>();
  for (const file of readdirSync(packs)) {
    const dir = join(scratch, 'unpacked', file);
    extract(join(packs, file), dir);
    tarballs.set(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name, join(packs, file));
  }

  // Core B: the same build packed again under another version.
  const coreB = join(scratch, 'core-b', 'package');
  extract(tarballs.get('@usp-ts/core')!, coreB);
  const manifest = JSON.parse(readFileSync(join(coreB, 'package.json'), 'utf8'));
  writeFileSync(join(coreB, 'package.json'), JSON.stringify({ ...manifest, version: CORE_B_VERSION }));
  const coreBTarball = join(packs, `core-b-${CORE_B_VERSION}.tgz`);
  sh('tar', ['-czf', coreBTarball, '-C', dirname(coreB), 'package'], scratch);

  const consumer = join(scratch, 'consumer');
  const top = join(consumer, 'node_modules');
  const nested = join(top, 'usp', 'node_modules');
  extract(tarballs.get('usp')!, join(top, 'usp'));
  for (const [name, tarball] of tarballs) if (name !== 'usp') extract(tarball, join(nested, name));
  extract(coreBTarball, join(top, '@usp-ts', 'core'));
  extract(tarballs.get('@usp-ts/ext-google-video')!, join(top, '@usp-ts', 'ext-google-video'));

  // Third-party dependencies come from the workspace's install (no registry in tests).
  for (const dir of readdirSync(join(repo, 'packages'))) {
    const pkgDir = join(repo, 'packages', dir);
    let deps: Record<string, string>;
    try {
      deps = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).dependencies ?? {};
    } catch {
      continue;
    }
    for (const dep of Object.keys(deps)) {
      if (tarballs.has(dep) || dep.startsWith('@usp-ts/')) continue;
      const link = join(top, dep);
      mkdirSync(dirname(link), { recursive: true });
      try {
        symlinkSync(realpathSync(join(pkgDir, 'node_modules', dep)), link, 'dir');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
    }
  }
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  writeFileSync(join(consumer, 'walk.mjs'), CHILD);

  server = await startTestServer();
  const video = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"',
    '        xmlns:video="http://www.google.com/schemas/sitemap-video/1.1">',
    `<url><loc>${server.origin}/watch</loc><video:video>`,
    `<video:thumbnail_loc>${server.origin}/t.jpg</video:thumbnail_loc>`,
    '<video:title>A</video:title><video:description>B</video:description>',
    `<video:content_loc>${server.origin}/v.mp4</video:content_loc>`,
    '<video:publication_date>2024-05-06T07:08:09+02:00</video:publication_date>',
    '</video:video></url></urlset>',
  ].join('\n');
  server.route('/robots.txt', { body: `Sitemap: ${server.origin}/video.xml\n` });
  server.route('/video.xml', { headers: { 'Content-Type': 'application/xml' }, body: video });
}, 180_000);

afterAll(async () => {
  await server?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('a plugin on another copy of core than usp', () => {
  it('works: its dates, usp nodes and errors are recognised across the two copies', async () => {
    const run = await runNode(['walk.mjs', `${server.origin}/`], {
      cwd: join(scratch, 'consumer'),
      guardMs: 60_000,
    });
    expect(run.stderr).toBe('');
    const out = lastJsonLine(run);
    // Two copies really are loaded.
    expect(out).toMatchObject({ coreA: CORE_A_VERSION, coreB: CORE_B_VERSION, distinctClasses: true });
    expect(out).toMatchObject({
      pages: 1,
      // The video's date went through usp's file page store and came back a date, not a string.
      dateType: 'object',
      dateIso: '2024-05-06T07:08:09+02:00',
      dateIsA: true,
      dateIsB: true,
      // Core B's checks recognise the tree usp (core A) built.
      indexByB: true,
      rootIsBWebsite: true,
      rootIsBInvalid: false,
      pagesNodeByB: true,
      // Errors of one copy are the other copy's classes, and only those.
      conflictIsA: true,
      conflictIsAUspError: true,
      conflictIsAOption: false,
      conflictCode: 'USP_PLUGIN_CONFLICT',
      urlErrorIsB: true,
      urlErrorIsBUspError: true,
    });
  });
});
