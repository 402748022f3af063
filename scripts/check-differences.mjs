// Every case in conformance-differences.json must exist in the corpus (when ../shared is
// present), carry a one-sentence reason, and be pinned by a test that names it.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const diffs = JSON.parse(readFileSync(join(root, 'conformance-differences.json'), 'utf8'));
const shared = process.env.USP_SHARED_DIR ?? join(root, '..', 'shared');
const cases = join(shared, 'conformance', 'cases');

function* testFiles(dir) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* testFiles(p);
    else if (/\.test\.[cm]?[jt]s$/.test(name)) yield p;
  }
}
const corpusOfTests = [...testFiles(join(root, 'packages')), ...testFiles(join(root, 'tools'))]
  .map((f) => readFileSync(f, 'utf8'))
  .join('\n');

const problems = [];
for (const [name, reason] of Object.entries(diffs)) {
  if (typeof reason !== 'string' || reason.trim().length < 10)
    problems.push(`${name}: reason missing or too short`);
  if (existsSync(cases) && !existsSync(join(cases, name))) problems.push(`${name}: no such conformance case`);
  if (!corpusOfTests.includes(`'${name}'`) && !corpusOfTests.includes(`"${name}"`)) {
    problems.push(`${name}: no test pins our behaviour (no test file names the case)`);
  }
}
if (problems.length > 0) {
  console.error(`conformance-differences.json:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`conformance-differences.json: ${Object.keys(diffs).length} differences, each pinned by a test`);
