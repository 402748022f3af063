// Issue 19's fixed costs of a `usp ls` process (start-up, module loading, the parse worker's
// start and warm-up), counted in instructions with callgrind: repeatable on a loaded machine,
// where wall and CPU times of one process vary by 30 % and more. The input is small on purpose
// (4 gzipped urlsets of 3,000 URLs, cut from the bench's 1M-site data), so the fixed costs are
// most of what is counted; the 200k and 2.6M sites' CPU per URL is where they show in `pnpm bench`.
//
//   node src/fixed-cost.mjs [--baseline DIR] [--runs N] [--sizes N,N] [--floor] [--rows id,id]
//
// Rows: `usp --version` (bare start-up), `usp ls` (default: a parse worker beside the main
// thread) and `usp ls --parse-workers 0`, each split by thread: main, parse worker, and V8's
// background threads (the optimising compiler, concurrent GC). Prints a table; writes nothing.
// `--sizes 3000,12000` counts each row on sites of the same shape with that many URLs per urlset
// and fits a line through the totals: the intercept is the fixed cost of a process (start-up,
// loading, warm-up: what a smaller site pays over fewer URLs), the slope its cost per URL.
// `--floor` adds the one-thread sax floor as a process (`proc/sax.mjs`, the bench's sax-proc).
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { ensureData } from './generate.mjs';
import { startSiteServer } from './server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const benchDir = path.resolve(here, '..');
const repo = path.resolve(benchDir, '..');

const URLSETS = 4;

function options(argv) {
  const o = { baseline: null, runs: 1, sizes: [3_000], floor: false, rows: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--baseline') o.baseline = path.resolve(argv[++i]);
    else if (argv[i] === '--runs') o.runs = Number(argv[++i]);
    else if (argv[i] === '--sizes') o.sizes = argv[++i].split(',').map(Number);
    else if (argv[i] === '--floor') o.floor = true;
    else if (argv[i] === '--rows') o.rows = argv[++i].split(',');
    else
      throw new Error(
        `unknown option ${argv[i]} (--baseline DIR, --runs N, --sizes N,N, --floor, --rows id,id)`,
      );
  }
  if (o.sizes.some((n) => !(Number.isInteger(n) && n > 0 && n <= 12_500))) {
    throw new Error('--sizes: URLs per urlset, integers from 1 to 12500 (4 urlsets cut from one of 50,000)');
  }
  return o;
}

/**
 * The small site: robots.txt → index → URLSETS gzipped urlsets of perUrlset URLs each (above
 * the inline threshold), cut from the 1M site's first urlset: the 200k site's shape, fewer URLs.
 */
async function smallSite(dir, perUrlset) {
  const manifest = await ensureData(path.join(benchDir, '.data'), 'full', (m) => console.error(m));
  const first = Object.values(manifest.sites.big.routes).find((r) => r.file.endsWith('.xml.gz'));
  const xml = gunzipSync(readFileSync(path.join(benchDir, '.data', 'full', first.file))).toString('utf8');
  const open = xml.indexOf('<url>');
  const head = xml.slice(0, open);
  const entries = xml.slice(open, xml.lastIndexOf('</urlset>')).split('<url>').slice(1);
  mkdirSync(path.join(dir, 'sitemaps'), { recursive: true });
  const routes = {
    '/robots.txt': { file: 'robots.txt', template: true },
    '/sitemap_index.xml': { file: 'sitemap_index.xml', template: true },
  };
  const locs = [];
  for (let i = 0; i < URLSETS; i++) {
    const body = `${head}${entries
      .slice(i * perUrlset, (i + 1) * perUrlset)
      .map((e) => `<url>${e}`)
      .join('')}</urlset>\n`;
    const p = `/sitemaps/s${i}.xml.gz`;
    writeFileSync(path.join(dir, p), gzipSync(body));
    routes[p] = { file: p.slice(1) };
    locs.push(`<sitemap><loc>{{ORIGIN}}${p}</loc></sitemap>`);
  }
  writeFileSync(
    path.join(dir, 'sitemap_index.xml'),
    `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.join('')}</sitemapindex>\n`,
  );
  writeFileSync(
    path.join(dir, 'robots.txt'),
    'User-agent: *\nAllow: /\n\nSitemap: {{ORIGIN}}/sitemap_index.xml\n',
  );
  const server = await startSiteServer(dir, routes);
  return { ...server, documents: Object.keys(routes) };
}

/** Instructions per thread of one process under callgrind: { main, worker, background, total }. */
function counted(args, outDir) {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  return new Promise((resolve, reject) => {
    const child = spawn(
      'valgrind',
      [
        '--tool=callgrind',
        '--smc-check=all-non-file',
        '--separate-threads=yes',
        `--callgrind-out-file=${outDir}/cg.%p`,
        process.execPath,
        ...args,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`exit ${code}: ${err.slice(-500)}`));
      const t = { main: 0, worker: 0, background: 0, total: 0 };
      for (const name of readdirSync(outDir)) {
        const text = readFileSync(path.join(outDir, name), 'utf8');
        const m = /^summary: (\d+)/m.exec(text);
        if (m === null) continue;
        const n = Number(m[1]);
        t.total += n;
        // Thread 1 is the main thread; another thread that entered JavaScript is a worker.
        if (name.endsWith('-01')) t.main += n;
        else if (text.includes('Builtins_JSEntry')) t.worker += n;
        else t.background += n;
      }
      resolve(t);
    });
  });
}

const o = options(process.argv.slice(2));
if (spawnSync('valgrind', ['--version']).status !== 0) {
  console.error('fixed-cost: needs valgrind (apt-get install valgrind)');
  process.exit(2);
}
const work = mkdtempSync(path.join(tmpdir(), 'usp-fixed-cost-'));
const builds = [['this build', repo]];
if (o.baseline) builds.push(['baseline', o.baseline]);
const cli = (dir) => path.join(dir, 'packages/usp/dist/cli.js');
// [id, label, argv, counted once for all sizes, counted once for all builds]
let cases = [
  ['version', 'usp --version', (dir) => [cli(dir), '--version'], true],
  ['ls', 'usp ls', (dir, site) => [cli(dir), 'ls', site.origin]],
  ['w0', 'usp ls --parse-workers 0', (dir, site) => [cli(dir), 'ls', '--parse-workers', '0', site.origin]],
];
if (o.floor) {
  // The floor does not depend on the build: counted once, with this checkout's script.
  const sax = path.join(here, 'proc', 'sax.mjs');
  cases.push([
    'floor',
    'sax floor, one thread',
    (_dir, site) => [sax, site.origin, ...site.documents],
    true,
    true,
  ]);
}
// `--rows ls,w0`: only those rows (ids: version, ls, w0, floor).
if (o.rows !== null) cases = cases.filter(([id]) => o.rows.includes(id));
const g = (n) => (n / 1e9).toFixed(3);
/** rows[size][label][build] = median counts */
const rows = new Map();
try {
  for (const size of o.sizes) {
    const siteDir = path.join(work, `site-${size}`);
    const site = await smallSite(siteDir, size);
    const bySize = new Map();
    rows.set(size, bySize);
    try {
      for (const [, label, argv, sizeless, buildless] of cases) {
        // `usp --version` reads no site: counted with the first size only.
        if (sizeless && !buildless && size !== o.sizes[0]) continue;
        const medians = {};
        for (const [build, dir] of buildless ? builds.slice(0, 1) : builds) {
          const runs = [];
          for (let r = 0; r < o.runs; r++) runs.push(await counted(argv(dir, site), path.join(work, 'cg')));
          runs.sort((a, b) => a.total - b.total);
          medians[build] = runs[Math.floor(runs.length / 2)];
          const t = medians[build];
          console.error(
            `${label}, ${size} URLs/urlset [${build}]: ${g(t.total)} G (main ${g(t.main)}, worker ${g(t.worker)}, background ${g(t.background)})`,
          );
        }
        bySize.set(label, medians);
      }
    } finally {
      await site.close();
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
const base = o.baseline ? ' | baseline total | ÷ baseline' : '';
for (const [size, bySize] of rows) {
  console.log(
    `\n${URLSETS} gzipped urlsets of ${size.toLocaleString('en-US')} URLs, instructions (G) by thread, median of ${o.runs}:\n`,
  );
  console.log(`| process | total | main | parse worker | V8 background${base} |`);
  console.log(`| --- | --- | --- | --- | ---${o.baseline ? ' | --- | ---' : ''} |`);
  for (const [label, m] of bySize) {
    const t = m['this build'];
    const b = m.baseline;
    const tail = b ? ` | ${g(b.total)} | ${(t.total / b.total).toFixed(3)}` : '';
    console.log(`| ${label} | ${g(t.total)} | ${g(t.main)} | ${g(t.worker)} | ${g(t.background)}${tail} |`);
  }
}
if (rows.size >= 2) {
  // A line through the smallest and the largest size: total = fixed + per URL × URLs.
  const [lo, hi] = [Math.min(...o.sizes), Math.max(...o.sizes)];
  const urls = (size) => size * URLSETS;
  console.log(
    `\nFixed cost (intercept, G) and cost per URL (slope, instructions), from ${urls(lo).toLocaleString('en-US')} and ${urls(hi).toLocaleString('en-US')} URLs; "at 200k" is the fixed cost's share of a 200,000-URL run, "at 1M" of a 1,000,000-URL one:\n`,
  );
  console.log(`| process | build | fixed | per URL | fixed share at 200k | at 1M | 200k ÷ 1M per URL |`);
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const [label, m] of rows.get(hi)) {
    for (const build of Object.keys(m)) {
      const a = rows.get(lo).get(label)?.[build];
      const b = m[build];
      if (a === undefined) continue;
      const slope = (b.total - a.total) / (urls(hi) - urls(lo));
      const fixed = a.total - slope * urls(lo);
      const at = (n) => fixed / (fixed + slope * n);
      const perUrl = (n) => (fixed + slope * n) / n;
      console.log(
        `| ${label} | ${build} | ${g(fixed)} | ${slope.toFixed(0)} | ${(at(200_000) * 100).toFixed(1)} % | ${(at(1_000_000) * 100).toFixed(1)} % | ${(perUrl(200_000) / perUrl(1_000_000)).toFixed(3)} |`,
      );
    }
  }
}
