// What `pnpm publish` would upload, checked on real tarballs (`pnpm pack`, which also copies the
// root LICENSE in and rewrites `workspace:` ranges). Every published package (packages/* not
// private) must pack its built output only: dist/ (JavaScript, CommonJS shims copied from src/,
// declarations, no source maps, since the sources they point at are not shipped), package.json,
// README (and docs/*.md), LICENSE and CHANGELOG; every link in that Markdown resolves inside the
// installed package (a file of the pack, a heading there) or is an absolute URL;
// every entry point the manifest names; the shared fields as sync-package-fields.mjs writes them;
// no `workspace:` range and no placeholder URL; and a scratch project installing the tarballs
// type-checks against them under NodeNext, bundler and node10 resolution (check-resolvers.mjs). Also: every published package is in the one
// `fixed` group of .changeset/config.json, so all are released at one version.
// Prints the plan (name, version, files, size). `--release` (the release script) also refuses an
// unset repository URL (`--dry-run` lets that pass) and a dist/ with files no clean build makes,
// which are only warnings for a working checkout whose dist/ has outlived a rename.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { checkResolvers, RESOLUTIONS } from './check-resolvers.mjs';
import { packAll } from './pack-all.mjs';
import {
  expectedManifest,
  fieldDifferences,
  PLACEHOLDER_HOST,
  repositorySetting,
} from './package-fields.mjs';
import { CORE, publishedPackages, root, rootManifest, workspacePackages } from './workspace-packages.mjs';

const run = promisify(execFile);
const release = process.argv.includes('--release');
/** The release dry run: as `--release`, but the repository URL may still be unset. */
const dryRun = process.argv.includes('--dry-run');

const ALLOWED_TOP = /^(package\.json|README\.md|LICENSE|CHANGELOG\.md|docs\/[^/]+\.md)$/;
const ALLOWED_DIST = /^dist\/.+\.(js|cjs|d\.ts)$/;
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

function* filesUnder(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* filesUnder(p);
    else yield p;
  }
}

/** dist/ against src/: what a clean build would make and does not exist, and the reverse. */
function distFreshness(dir) {
  const expected = new Set();
  for (const f of filesUnder(join(dir, 'src'))) {
    const rel = relative(join(dir, 'src'), f);
    // Plain CommonJS sources (core's sax-module.cjs) are copied to dist as they are.
    if (rel.endsWith('.cjs')) {
      expected.add(rel);
      continue;
    }
    if (!rel.endsWith('.ts') || rel.endsWith('.d.ts') || TEST_FILE.test(rel)) continue;
    const base = rel.slice(0, -3);
    expected.add(`${base}.js`);
    expected.add(`${base}.d.ts`);
  }
  const present = new Set([...filesUnder(join(dir, 'dist'))].map((f) => relative(join(dir, 'dist'), f)));
  return {
    missing: [...expected].filter((f) => !present.has(f)).map((f) => `dist/${f}`),
    stale: [...present].filter((f) => !expected.has(f)).map((f) => `dist/${f}`),
  };
}

/** GitHub's (and npm's) anchor of a heading: lower case, punctuation dropped, spaces to `-`. */
function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a Markdown text's headings make, `-1`, `-2` ... for repeats, as GitHub numbers them. */
function anchorsOf(markdown) {
  const anchors = new Set();
  for (const m of withoutFences(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1]);
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** Markdown without fenced code blocks, where `#` starts no heading and `[x](y)` is no link. */
function withoutFences(markdown) {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** Markdown without code, fenced or inline, where `[x](y)` is not a link. */
function withoutCode(markdown) {
  return withoutFences(markdown).replace(/`[^`\n]*`/g, '');
}

/**
 * Links of a shipped Markdown file that do not resolve inside the installed package: a relative
 * path must be a file of the pack (and its `#anchor` a heading there), an `#anchor` a heading of
 * the file itself. Absolute URLs are taken as they are (no network here).
 */
function brokenLinks(path, markdown, packed) {
  const broken = [];
  const links = [...withoutCode(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map(
    (m) => m[1],
  );
  for (const link of links) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
    const [target, anchor] = link.split('#', 2);
    const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/') + 1) : '';
    const file = target === '' ? path : normalizePath(dir + target);
    const text = file === null ? undefined : packed.get(file.replace(/\/$/, ''));
    if (text === undefined) {
      broken.push(`${path}: ${link} (not in the package)`);
      continue;
    }
    if (anchor !== undefined && anchor !== '' && file.endsWith('.md') && !anchorsOf(text).has(anchor))
      broken.push(`${path}: ${link} (no such heading)`);
  }
  return broken;
}

/** `a/./b/../c` as `a/c`; `null` when it climbs out of the package. */
function normalizePath(path) {
  const parts = [];
  for (const part of path.split('/')) {
    if (part === '.' || part === '') continue;
    if (part === '..') {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join('/');
}

/** Strings anywhere in a JSON value whose text contains `needle`. */
function stringsWith(value, needle, at = '') {
  if (typeof value === 'string') return value.includes(needle) ? [`${at || '(root)'}: ${value}`] : [];
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => stringsWith(v, needle, at ? `${at}.${k}` : k));
}

async function check(pkg, context, packed) {
  const { manifest, dir } = pkg;
  const problems = [];
  const warnings = [];
  const expected = expectedManifest(manifest, { ...context, relativeDir: pkg.relativeDir });
  const differing = fieldDifferences(manifest, expected);
  if (differing.length > 0)
    problems.push(`${differing.join(', ')} differ from the root setting: run \`pnpm packages:sync\``);
  if (!existsSync(join(dir, 'README.md'))) problems.push('no README.md');
  if (!Array.isArray(manifest.keywords) || manifest.keywords.length === 0) problems.push('no keywords');
  if (typeof manifest.description !== 'string' || manifest.description === '')
    problems.push('no description');
  if (!existsSync(join(dir, 'dist'))) {
    problems.push('no dist/: run `pnpm build` first');
    return { manifest, problems, warnings };
  }
  const { missing, stale } = distFreshness(dir);
  if (missing.length > 0)
    problems.push(`dist/ is not built from the current src/ (no ${missing[0]}): run \`pnpm build\``);
  const staleFiles = new Set(stale);
  if (stale.length > 0) {
    const note = `dist/ holds ${stale.length} files no build of src/ makes (${stale[0]} …): delete dist/ and build`;
    (release ? problems : warnings).push(note);
  }

  const { tarball, files } = packed.get(manifest.name);
  for (const f of files) {
    if (ALLOWED_TOP.test(f)) continue;
    if (!release && staleFiles.has(f)) continue; // reported once above
    if (!ALLOWED_DIST.test(f)) problems.push(`unexpected file in the pack: ${f}`);
    else if (TEST_FILE.test(f)) problems.push(`test file in the pack: ${f}`);
  }
  if (!files.includes('LICENSE'))
    problems.push('no LICENSE in the pack (the root LICENSE is copied in by pnpm)');
  if (existsSync(join(dir, 'CHANGELOG.md')) && !files.includes('CHANGELOG.md'))
    problems.push('CHANGELOG.md is not in the pack');
  for (const entry of entryPoints(manifest)) {
    if (!files.includes(entry)) problems.push(`entry point ${entry} is not in the pack`);
  }
  if (!files.some((f) => f.endsWith('.d.ts'))) problems.push('no type declarations in the pack');

  // The READMEs and docs as npm and node_modules show them: every link resolves in the package.
  const shipped = new Map(files.map((f) => [f, '']));
  const markdown = files.filter((f) => f.endsWith('.md') && f !== 'CHANGELOG.md');
  for (const f of markdown) {
    const { stdout: text } = await run('tar', ['-xzf', tarball, '-O', `package/${f}`], {
      maxBuffer: 16 * 1024 * 1024,
    });
    shipped.set(f, text);
  }
  for (const f of markdown) problems.push(...brokenLinks(f, shipped.get(f), shipped));

  const { stdout: manifestText } = await run('tar', ['-xzf', tarball, '-O', 'package/package.json']);
  const packedManifest = JSON.parse(manifestText);
  for (const s of stringsWith(packedManifest, 'workspace:'))
    problems.push(`packed manifest keeps a workspace range: ${s}`);
  for (const s of stringsWith(packedManifest, PLACEHOLDER_HOST))
    problems.push(`placeholder URL in the packed manifest: ${s}`);
  if (context.repositoryUrl !== '' && packedManifest.repository?.url !== context.repositoryUrl)
    problems.push(
      `packed repository.url is ${JSON.stringify(packedManifest.repository?.url)}, not the root setting`,
    );
  return { manifest, problems, warnings, files: files.length, size: statSync(tarball).size, tarball };
}

/** The expanded `fixed` groups, read and validated the way changesets reads them. */
function fixedGroups() {
  const changesets = createRequire(
    createRequire(join(root, 'package.json')).resolve('@changesets/cli/package.json'),
  );
  const { parse } = changesets('@changesets/config');
  const json = JSON.parse(readFileSync(join(root, '.changeset', 'config.json'), 'utf8'));
  const packages = {
    root: { dir: root, packageJson: rootManifest() },
    packages: workspacePackages().map((p) => ({ dir: p.dir, packageJson: p.manifest })),
    tool: 'pnpm',
  };
  const bench = join(root, 'bench', 'package.json');
  if (existsSync(bench))
    packages.packages.push({ dir: join(root, 'bench'), packageJson: JSON.parse(readFileSync(bench)) });
  return parse(json, packages).fixed;
}

const packages = publishedPackages();
const global = [];
const globalWarnings = [];

if (!existsSync(join(root, 'LICENSE'))) global.push('no LICENSE at the repository root');
const setting = repositorySetting(rootManifest());
if (setting.url.includes(PLACEHOLDER_HOST))
  global.push(`the root repository.url is a placeholder: ${setting.url}`);
// Unset until the first release (CONTRIBUTING, "Releasing"): the release refuses it and its dry
// run says so; `pnpm test` does not repeat it at every run.
if (setting.url === '' && (release || dryRun)) {
  const note = 'the root package.json has no repository.url yet: set it, then `pnpm packages:sync`';
  (release && !dryRun ? global : globalWarnings).push(note);
}

const groups = fixedGroups();
const names = new Set(packages.map((p) => p.manifest.name));
const group = groups.find((g) => g.includes(CORE)) ?? [];
for (const name of names)
  if (!group.includes(name))
    global.push(`${name} is not in the fixed group with ${CORE} (.changeset/config.json)`);
for (const p of workspacePackages())
  if (p.manifest.private && group.includes(p.manifest.name) && p.manifest.version !== '0.0.0')
    global.push(`private ${p.manifest.name} is in the fixed group: its version must stay 0.0.0`);
const versions = new Set(packages.map((p) => p.manifest.version));
if (versions.size > 1) global.push(`published packages have different versions: ${[...versions].join(', ')}`);

const core = packages.find((p) => p.manifest.name === CORE);
const context = {
  rootManifest: rootManifest(),
  coreVersion: core?.manifest.version,
  repositoryUrl: setting.url,
};
const packDir = mkdtempSync(join(tmpdir(), 'usp-pack-'));
let results;
let resolverFailures = [];
try {
  const packed = await packAll(packDir);
  results = await Promise.all(packages.map((p) => check(p, context, packed)));
  if (results.every((r) => r.problems.length === 0)) resolverFailures = await checkResolvers(packed);
} finally {
  rmSync(packDir, { recursive: true, force: true });
}

let failed = global.length > 0;
for (const w of globalWarnings) console.warn(`warning: ${w}`);
for (const g of global) console.error(g);
for (const r of results) {
  for (const w of r.warnings) console.warn(`warning: ${r.manifest.name}: ${w}`);
  if (r.problems.length > 0) {
    failed = true;
    console.error(`${r.manifest.name}:\n  ${r.problems.join('\n  ')}`);
  }
}
for (const f of resolverFailures) console.error(`scratch project, moduleResolution ${f}`);
if (failed || resolverFailures.length > 0) process.exit(1);
for (const r of results)
  console.log(
    `  ${`${r.manifest.name}@${r.manifest.version}`.padEnd(36)} ${String(r.files).padStart(3)} files ${(r.size / 1024).toFixed(1).padStart(7)} kB`,
  );
console.log(
  `check-pack: ${results.length} packages pack dist, types, README (and docs), LICENSE and CHANGELOG only; every link of their Markdown resolves in the package; a scratch project installing them type-checks under moduleResolution ${Object.keys(RESOLUTIONS).join(', ')}`,
);
