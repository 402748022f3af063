// Every published package must pack to its built output only: `npm pack --dry-run` may list
// dist/ (JavaScript, declarations, their maps), package.json, README and licence/changelog,
// nothing from src/ or tests, and every entry point the manifest names must be in the pack.
// Run after `pnpm build` (the root test script does).
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const packagesDir = join(root, 'packages');

const ALLOWED_TOP = /^(package\.json|README\.md|LICEN[SC]E(\.md|\.txt)?|CHANGELOG\.md)$/i;
const ALLOWED_DIST = /^dist\/.+\.(js|d\.ts|js\.map|d\.ts\.map)$/;
const TEST_FILE = /(^|\/)(test|tests|__tests__)\/|\.test\.|\.spec\./;

/** Every file path a manifest points at (exports, main, types, bin). */
function entryPoints(manifest) {
  const out = new Set();
  const walk = (v) => {
    if (typeof v === 'string') {
      if (v.startsWith('./') && !v.includes('*')) out.add(v.slice(2));
    } else if (v && typeof v === 'object') {
      for (const x of Object.values(v)) walk(x);
    }
  };
  walk(manifest.exports);
  for (const key of ['main', 'types', 'module'])
    if (typeof manifest[key] === 'string') out.add(manifest[key].replace(/^\.\//, ''));
  if (typeof manifest.bin === 'string') out.add(manifest.bin.replace(/^\.\//, ''));
  else if (manifest.bin) for (const b of Object.values(manifest.bin)) out.add(b.replace(/^\.\//, ''));
  out.delete('package.json');
  return [...out];
}

async function check(dir) {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const problems = [];
  if (manifest.private) return { name: manifest.name, skipped: true, problems };
  if (!existsSync(join(dir, 'dist'))) {
    return { name: manifest.name, problems: ['no dist/: run `pnpm build` first'] };
  }
  if (!existsSync(join(dir, 'README.md'))) problems.push('no README.md');
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: dir,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, npm_config_loglevel: 'error', npm_config_update_notifier: 'false' },
  });
  const [info] = JSON.parse(stdout);
  const files = info.files.map((f) => f.path);
  for (const f of files) {
    if (ALLOWED_TOP.test(f)) continue;
    if (!ALLOWED_DIST.test(f)) problems.push(`unexpected file in the pack: ${f}`);
    else if (TEST_FILE.test(f)) problems.push(`test file in the pack: ${f}`);
  }
  for (const entry of entryPoints(manifest)) {
    if (!files.includes(entry)) problems.push(`entry point ${entry} is not in the pack`);
  }
  if (!files.some((f) => f.endsWith('.d.ts'))) problems.push('no type declarations in the pack');
  if (!Array.isArray(manifest.files) || !manifest.files.includes('dist'))
    problems.push('"files" must list "dist"');
  return { name: manifest.name, files: files.length, size: info.size, problems };
}

const dirs = readdirSync(packagesDir)
  .map((d) => join(packagesDir, d))
  .filter((d) => existsSync(join(d, 'package.json')));
const results = await Promise.all(dirs.map(check));
let failed = false;
for (const r of results) {
  if (r.skipped) continue;
  if (r.problems.length > 0) {
    failed = true;
    console.error(`${r.name}:\n  ${r.problems.join('\n  ')}`);
  }
}
if (failed) process.exit(1);
const checked = results.filter((r) => !r.skipped);
console.log(`check-pack: ${checked.length} packages pack dist, types and README only`);
