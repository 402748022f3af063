// The manifest fields every published package shares, derived from one root setting: `license`,
// `author`, `engines` and `repository` (with `homepage` and `bugs`) of the root package.json.
// Also the release rules a manifest carries: core is a peer (never a dependency) of every
// package but `usp`, at `^<core's version>`, so that a user has one copy of core, and `files`
// ships the changelog. `sync-package-fields.mjs` writes these, `check-pack.mjs` refuses a
// package that differs.
import { CORE, MAIN } from './workspace-packages.mjs';

/** A URL that marks the repository as not having its public home yet. */
export const PLACEHOLDER_HOST = 'example.invalid';

/** `{ url, homepage, bugs }` from the root manifest; `url` is `''` until the repository is public. */
export function repositorySetting(rootManifest) {
  const repo = rootManifest.repository;
  const url = typeof repo === 'string' ? repo : (repo?.url ?? '');
  return { url, homepage: rootManifest.homepage ?? '', bugs: rootManifest.bugs ?? '' };
}

/** `owner/name` of a GitHub repository URL in any of its usual spellings, else null. */
function gitHubSlug(url) {
  const m = /github\.com[/:]([^/]+)\/([^/#?]+?)(?:\.git)?\/?$/.exec(url);
  return m ? `${m[1]}/${m[2]}` : null;
}

/**
 * The manifest with the shared fields as they should be. `coreVersion` is core's version in the
 * same checkout (every published package is released at one version, see .changeset/config.json).
 */
export function expectedManifest(manifest, { rootManifest, relativeDir, coreVersion }) {
  const m = structuredClone(manifest);
  const setting = repositorySetting(rootManifest);

  m.license = rootManifest.license;
  m.author = rootManifest.author;
  m.engines = { ...(m.engines ?? {}), node: rootManifest.engines.node };

  delete m.repository;
  delete m.homepage;
  delete m.bugs;
  if (setting.url !== '') {
    m.repository = { type: 'git', url: setting.url, directory: relativeDir };
    const slug = gitHubSlug(setting.url);
    const homepage = slug ? `https://github.com/${slug}/tree/main/${relativeDir}#readme` : setting.homepage;
    const bugs = slug ? `https://github.com/${slug}/issues` : setting.bugs;
    if (homepage) m.homepage = homepage;
    if (bugs) m.bugs = bugs;
  }

  const files = new Set(m.files ?? []);
  files.add('dist');
  files.add('CHANGELOG.md');
  m.files = [...files];
  m.publishConfig = { ...(m.publishConfig ?? {}), access: 'public' };

  if (m.name !== CORE && m.name !== MAIN) {
    // Two copies of core in one install make a plugin's dates, nodes and errors foreign to usp's
    // (issue 20): core is a peer, installed once by the user or by `usp`. The range is a plain
    // one, not `workspace:^`, because changesets bumps every dependent of a peer to a major
    // version on a 0.x minor release (bumpVersionsWithWorkspaceProtocolOnly leaves it alone).
    const uses =
      m.dependencies?.[CORE] !== undefined ||
      m.peerDependencies?.[CORE] !== undefined ||
      m.devDependencies?.[CORE] !== undefined;
    if (uses) {
      if (m.dependencies) {
        delete m.dependencies[CORE];
        if (Object.keys(m.dependencies).length === 0) delete m.dependencies;
      }
      m.peerDependencies = { ...(m.peerDependencies ?? {}), [CORE]: `^${coreVersion}` };
      m.devDependencies = { ...(m.devDependencies ?? {}), [CORE]: 'workspace:^' };
    }
  }
  // An optional peer on another package of ours (usp's native SQLite store and queue client, kept
  // out of a plain `npm install usp`) follows the one release version like core's range does.
  for (const name of Object.keys(m.peerDependencies ?? {}))
    if (name.startsWith('@usp-ts/') && name !== CORE) m.peerDependencies[name] = `^${coreVersion}`;
  return inKeyOrder(m);
}

const KEY_ORDER = [
  'name',
  'version',
  'private',
  'description',
  'keywords',
  'license',
  'author',
  'type',
  'engines',
  'sideEffects',
  'exports',
  'main',
  'types',
  'bin',
  'files',
  'repository',
  'homepage',
  'bugs',
  'scripts',
  'dependencies',
  'peerDependencies',
  'peerDependenciesMeta',
  'devDependencies',
  'publishConfig',
];

/** The usual npm key order, so that written fields land beside their kin; other keys follow. */
function inKeyOrder(m) {
  const rank = (k) => (KEY_ORDER.includes(k) ? KEY_ORDER.indexOf(k) : KEY_ORDER.length);
  return Object.fromEntries(Object.entries(m).sort(([a], [b]) => rank(a) - rank(b)));
}

const MANAGED = [
  'license',
  'author',
  'engines',
  'repository',
  'homepage',
  'bugs',
  'files',
  'publishConfig',
  'dependencies',
  'peerDependencies',
  'devDependencies',
];

/** The managed fields where `manifest` differs from what `expectedManifest` gives. */
export function fieldDifferences(manifest, expected) {
  return MANAGED.filter((key) => JSON.stringify(manifest[key]) !== JSON.stringify(expected[key]));
}
