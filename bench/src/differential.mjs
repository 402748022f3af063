// The XML fast path against sax on the bench's inputs and on many seeds (issue 37): every
// generated document (the single documents and each urlset of the 1M site, in 64 KiB chunks)
// parsed with `xmlTokenizer: 'auto'` and with `'sax'` must give the same pages, warnings and
// result; then the differential property tests of core and usp run with `--seeds N` seeds
// (CI runs one). `node bench/src/differential.mjs [--seeds 20] [--runs 300]`
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { ensureData } from './generate.mjs';
import { fileChunks, iterate } from './impl/common.mjs';

const benchDir = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const repo = path.dirname(benchDir);
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const seeds = arg('seeds', 20);
const runs = arg('runs', 300);

const usp = await import('usp');
const manifest = await ensureData(path.join(benchDir, '.data'), 'full', console.log);
const files = [
  ...Object.values(manifest.singles).map((s) => s.file),
  ...Object.values(manifest.sites.big.routes).map((r) => r.file),
];

async function parse(file, xmlTokenizer) {
  const chunks = fileChunks(path.join(manifest.dir, file));
  const warnings = [];
  const parsed = await usp.parseSitemapDocument(iterate(chunks), {
    url: `http://bench.invalid/${file}`,
    onWarning: (w) => warnings.push(w),
    xmlTokenizer,
  });
  return { ...parsed, sitemap: usp.sitemapToJSON(parsed.sitemap), warnings };
}

let failed = 0;
for (const file of files) {
  const [fast, sax] = [await parse(file, 'auto'), await parse(file, 'sax')];
  const same = isDeepStrictEqual(fast, sax);
  if (!same) failed++;
  console.log(`${same ? 'same' : 'DIFFERENT'}  ${file}  (${sax.sitemap.pages?.length ?? 0} pages)`);
}

for (let seed = 1; seed <= seeds; seed++) {
  for (const [pkg, test] of [
    ['packages/core', 'test/xml-differential.test.ts'],
    ['packages/usp', 'test/xml-differential.test.ts'],
  ]) {
    const r = spawnSync('npx', ['vitest', 'run', test], {
      cwd: path.join(repo, pkg),
      env: { ...process.env, USP_FUZZ_SEED: String(seed), USP_FUZZ_RUNS: String(runs) },
      encoding: 'utf8',
    });
    if (r.status !== 0) failed++;
    console.log(`${r.status === 0 ? 'pass' : 'FAIL'}  seed ${seed}  ${pkg}/${test}`);
    if (r.status !== 0) console.log(r.stdout.slice(-4000));
  }
}
console.log(failed === 0 ? 'all the same' : `${failed} differences`);
process.exitCode = failed === 0 ? 0 : 1;
