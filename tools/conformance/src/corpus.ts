import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CorpusAlternates, CorpusNode } from './corpus-form.js';

/** `case.json` as the corpus README (section 1) describes it. */
export interface CaseMeta {
  kind: 'document' | 'site';
  description: string;
  source: string[];
  /** Document cases: the URL the body was fetched from. */
  url?: string;
  /** Document cases: file name of the raw body inside the case folder. */
  input?: string;
  headers?: Record<string, string>;
  via?: 'SitemapFetcher' | 'sitemap_from_str';
  /** Site cases: homepage with the `PORT` placeholder. */
  homepage?: string;
  options?: SiteCaseOptions;
  python_quirks?: string[];
  notes?: string;
  depends_on_current_date?: boolean;
  order_depends_on_hash_seed?: boolean;
  alternates_golden?: boolean;
}

/** `options` of a site case: keyword arguments of usp's `sitemap_tree_for_homepage`. */
export interface SiteCaseOptions {
  use_robots?: boolean;
  use_known_paths?: boolean;
  normalize_homepage_url?: boolean;
  extra_known_paths?: string[];
  recurse_callback?: { reject_url_regex: string };
  recurse_list_callback?: { reject_url_regex: string };
}

export interface CaseInfo {
  name: string;
  dir: string;
  meta: CaseMeta;
}

export interface ConformanceCase extends CaseInfo {
  /** Document cases: the raw response body, byte-exact. */
  input: Uint8Array | null;
  expected: CorpusNode;
  /** `expected_alternates.json` when the case has one. */
  expectedAlternates: CorpusAlternates | null;
  /** Site cases: `expected_requests.json` (informative request counts). */
  expectedRequests: Record<string, number> | null;
}

export type CaseFilter =
  | ((info: CaseInfo) => boolean)
  | { kind?: 'document' | 'site'; names?: readonly string[]; exclude?: readonly string[] };

let cachedRoot: string | undefined;

/** The repository root: the nearest ancestor of this module holding `pnpm-workspace.yaml`. */
export function repoRoot(): string {
  if (cachedRoot !== undefined) return cachedRoot;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) {
      cachedRoot = dir;
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error('@usp-ts/conformance: repository root (pnpm-workspace.yaml) not found');
    dir = parent;
  }
}

/** `USP_SHARED_DIR`, or `../shared` next to the repository. */
export function sharedDir(): string {
  const env = process.env.USP_SHARED_DIR;
  return env !== undefined && env !== '' ? env : join(repoRoot(), '..', 'shared');
}

export function conformanceDir(): string {
  return join(sharedDir(), 'conformance');
}

export function casesDir(): string {
  return join(conformanceDir(), 'cases');
}

/** Whether the corpus is there; suites skip with a visible message when it is not. */
export function hasCorpus(): boolean {
  return existsSync(casesDir());
}

/** The message a suite prints when it skips for lack of the corpus. */
export function missingCorpusMessage(): string {
  return `conformance corpus not found at ${casesDir()} (set USP_SHARED_DIR): conformance cases skipped`;
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

/** Every case (name, folder, `case.json`), sorted by name, narrowed by `filter`. */
export function loadCases(filter?: CaseFilter): CaseInfo[] {
  if (!hasCorpus()) return [];
  const dir = casesDir();
  const infos: CaseInfo[] = [];
  for (const name of readdirSync(dir).sort()) {
    const caseDir = join(dir, name);
    if (!existsSync(join(caseDir, 'case.json'))) continue;
    infos.push({ name, dir: caseDir, meta: readJson<CaseMeta>(join(caseDir, 'case.json')) });
  }
  if (filter === undefined) return infos;
  if (typeof filter === 'function') return infos.filter(filter);
  return infos.filter(
    (c) =>
      (filter.kind === undefined || c.meta.kind === filter.kind) &&
      (filter.names === undefined || filter.names.includes(c.name)) &&
      (filter.exclude === undefined || !filter.exclude.includes(c.name)),
  );
}

/** One case with its input bytes and goldens. Throws when the case does not exist. */
export function readCase(name: string): ConformanceCase {
  const dir = join(casesDir(), name);
  const metaPath = join(dir, 'case.json');
  if (!existsSync(metaPath)) throw new Error(`conformance case ${name} not found in ${casesDir()}`);
  const meta = readJson<CaseMeta>(metaPath);
  const optional = <T>(file: string): T | null =>
    existsSync(join(dir, file)) ? readJson<T>(join(dir, file)) : null;
  const requests = optional<{ requests: Record<string, number> }>('expected_requests.json');
  return {
    name,
    dir,
    meta,
    input: meta.input !== undefined ? new Uint8Array(readFileSync(join(dir, meta.input))) : null,
    expected: readJson<CorpusNode>(join(dir, 'expected.json')),
    expectedAlternates: optional<CorpusAlternates>('expected_alternates.json'),
    expectedRequests: requests?.requests ?? null,
  };
}

/** `conformance-differences.json` at the repository root: case name → why we differ from usp. */
export function loadDifferences(): Record<string, string> {
  const path = join(repoRoot(), 'conformance-differences.json');
  if (!existsSync(path)) return {};
  return readJson<Record<string, string>>(path);
}
