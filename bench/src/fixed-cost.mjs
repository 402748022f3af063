// Issue 19's fixed costs of a `usp ls` process (start-up, module loading, the parse worker's
// start and warm-up), counted in instructions with callgrind: repeatable on a loaded machine,
// where wall and CPU times of one process vary by 30 % and more. The input is small on purpose
// (4 gzipped urlsets of 3,000 URLs, cut from the bench's 1M-site data), so the fixed costs are
// most of what is counted; the 200k and 2.6M sites' CPU per URL is where they show in `pnpm bench`.
//
//   node src/fixed-cost.mjs [--baseline DIR] [--runs N]
//
// Rows: `usp --version` (bare start-up), `usp ls` (default: a parse worker beside the main
// thread) and `usp ls --parse-workers 0`, each split by thread: main, parse worker, and V8's
// background threads (the optimising compiler, concurrent GC). Prints a table; writes nothing.
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
const PER_URLSET = 3_000;

function options(argv) {
  const o = { baseline: null, runs: 1 };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--baseline') o.baseline = path.resolve(argv[++i]);
    else if (argv[i] === '--runs') o.runs = Number(argv[++i]);
    else throw new Error(`unknown option ${argv[i]} (--baseline DIR, --runs N)`);
  }
  return o;
}

/** The small site: robots.txt → index → URLSETS gzipped urlsets, each above the inline threshold. */
async function smallSite(dir) {
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
      .slice(i * PER_URLSET, (i + 1) * PER_URLSET)
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
  return startSiteServer(dir, routes);
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
const server = await smallSite(path.join(work, 'site'));
const builds = [['this build', repo]];
if (o.baseline) builds.push(['baseline', o.baseline]);
const cases = [
  ['usp --version', ['--version']],
  ['usp ls', ['ls', server.origin]],
  ['usp ls --parse-workers 0', ['ls', '--parse-workers', '0', server.origin]],
];
const g = (n) => (n / 1e9).toFixed(3);
const rows = [];
try {
  for (const [label, args] of cases) {
    const medians = {};
    for (const [build, dir] of builds) {
      const runs = [];
      for (let r = 0; r < o.runs; r++) {
        runs.push(
          await counted([path.join(dir, 'packages/usp/dist/cli.js'), ...args], path.join(work, 'cg')),
        );
      }
      runs.sort((a, b) => a.total - b.total);
      medians[build] = runs[Math.floor(runs.length / 2)];
      const t = medians[build];
      console.error(
        `${label} [${build}]: ${g(t.total)} G (main ${g(t.main)}, worker ${g(t.worker)}, background ${g(t.background)})`,
      );
    }
    rows.push([label, medians]);
  }
} finally {
  await server.close();
  rmSync(work, { recursive: true, force: true });
}
console.log(
  `\n${URLSETS} gzipped urlsets of ${PER_URLSET.toLocaleString('en-US')} URLs, instructions (G) by thread, median of ${o.runs}:\n`,
);
const base = o.baseline ? ' | baseline total | ÷ baseline' : '';
console.log(`| process | total | main | parse worker | V8 background${base} |`);
console.log(`| --- | --- | --- | --- | ---${o.baseline ? ' | --- | ---' : ''} |`);
for (const [label, m] of rows) {
  const t = m['this build'];
  const b = m.baseline;
  const tail = b ? ` | ${g(b.total)} | ${(t.total / b.total).toFixed(3)}` : '';
  console.log(`| ${label} | ${g(t.total)} | ${g(t.main)} | ${g(t.worker)} | ${g(t.background)}${tail} |`);
}
