// `pnpm bench`: generates the inputs (once), serves them on 127.0.0.1, runs every implementation
// in its own process, alternating, several times, and writes results/results.{json,md} and the chart.
//
//   node src/run.mjs [--quick] [--runs N] [--big-runs N] [--bbc-runs N] [--cli-runs N] [--only id,id]
//                    [--impls id,id] [--baseline DIR] [--timeout-s N] [--no-chart] [--no-extra-ca-certs] [--out DIR]
import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureData } from './generate.mjs';
import { renderMarkdown, renderReadmeSection, spliceReadme } from './report.mjs';
import { startSiteServer } from './server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const benchDir = path.resolve(here, '..');

function parseArgs(argv) {
  const o = {
    quick: false,
    runs: 5,
    bigRuns: 3,
    bbcRuns: 1,
    cliRuns: 3,
    baseline: null,
    only: null,
    impls: null,
    timeoutS: 240,
    chart: true,
    extraCaCerts: true,
    out: path.join(benchDir, 'results'),
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => argv[++i];
    if (a === '--quick') o.quick = true;
    else if (a === '--runs') o.runs = Number(next());
    else if (a === '--big-runs') o.bigRuns = Number(next());
    else if (a === '--bbc-runs') o.bbcRuns = Number(next());
    else if (a === '--cli-runs') o.cliRuns = Number(next());
    else if (a === '--baseline') o.baseline = path.resolve(next());
    else if (a === '--only') o.only = next().split(',');
    else if (a === '--impls') o.impls = next().split(',');
    else if (a === '--timeout-s') o.timeoutS = Number(next());
    else if (a === '--no-chart') o.chart = false;
    else if (a === '--no-extra-ca-certs') o.extraCaCerts = false;
    else if (a === '--out') o.out = path.resolve(next());
    else if (a === '--report-only') o.reportOnly = true;
    else if (a === '--') continue;
    else throw new Error(`unknown argument ${a}`);
  }
  if (o.quick) {
    o.runs = 1;
    o.bigRuns = 1;
    o.bbcRuns = 1;
    o.cliRuns = 1;
    o.timeoutS = Math.min(o.timeoutS, 60);
    // Smoke-test output stays out of the committed results.
    if (!argv.includes('--out')) o.out = path.join(benchDir, 'results', 'raw', 'quick');
  }
  return o;
}

function pkgVersion(name) {
  try {
    const p = path.join(benchDir, 'node_modules', name, 'package.json');
    return JSON.parse(readFileSync(p, 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

export const IMPLS = {
  ours: { label: 'usp-ts', kind: 'ours', module: 'ours' },
  'ours-w0': { label: 'usp-ts, parse in-thread', kind: 'ours', module: 'ours', workers: 0 },
  'ours-w1': { label: 'usp-ts, 1 worker thread', kind: 'ours', module: 'ours', workers: 1 },
  'ours-w2': { label: 'usp-ts, 2 worker threads', kind: 'ours', module: 'ours', workers: 2 },
  crawlee: { label: `crawlee parseSitemap ${pkgVersion('@crawlee/utils')}`, kind: 'peer', module: 'crawlee' },
  sitemapper: { label: `sitemapper ${pkgVersion('sitemapper')}`, kind: 'peer', module: 'sitemapper' },
  sax: { label: `floor: sax ${pkgVersion('sax')}, empty handlers`, kind: 'floor', module: 'sax' },
  'sax-bare': {
    label: `sax ${pkgVersion('sax')}, no handlers (info)`,
    kind: 'info',
    module: 'sax',
    handlers: 'none',
  },
  gunzip: { label: 'gunzip only (info)', kind: 'info', module: 'gunzip' },
  // Whole processes, as users run them: start-up, module loading and output included.
  'cli-tabtree': { label: 'usp ls (tabtree, the default)', kind: 'ours', cli: ['-f', 'tabtree'] },
  'cli-pages': { label: 'usp ls -f pages', kind: 'ours', cli: ['-f', 'pages'] },
  'cli-ndjson': { label: 'usp ls -f ndjson', kind: 'ours', cli: ['-f', 'ndjson'] },
  'cli-w0': { label: 'usp ls --parse-workers 0 (tabtree)', kind: 'ours', cli: ['--parse-workers', '0'] },
  // The same walk, written as an HTML report instead of a listing (issue 36's bar: within 1.3x of ls).
  'cli-report': {
    label: 'usp report (HTML file)',
    kind: 'ours',
    command: 'report',
    cli: ['-o', path.join(os.tmpdir(), 'usp-bench-report.html')],
  },
  'crawlee-proc': {
    label: `crawlee parseSitemap ${pkgVersion('@crawlee/utils')}, a script printing URLs`,
    kind: 'peer',
    script: 'crawlee.mjs',
  },
  'sax-proc': {
    label: `floor: sax ${pkgVersion('sax')}, empty handlers, one thread`,
    kind: 'floor',
    script: 'sax.mjs',
  },
};

/** The built CLI the whole-process rows run (this checkout's). */
const USP_CLI = path.resolve(benchDir, '..', 'packages', 'usp', 'dist', 'cli.js');

/**
 * With `--baseline DIR` (another built checkout, e.g. a copy of main before a change), our rows
 * get a twin running that build in the same rounds, back to back, for paired before/after ratios.
 */
function addBaselineImpls(o) {
  if (o.baseline === null) return;
  for (const [id, impl] of Object.entries(IMPLS)) {
    if (impl.kind !== 'ours' || id.endsWith('@base')) continue;
    IMPLS[`${id}@base`] = {
      ...impl,
      label: `${impl.label} [baseline]`,
      kind: 'baseline',
      twinOf: id,
      cliPath: path.join(o.baseline, 'packages', 'usp', 'dist', 'cli.js'),
      runner: path.join(o.baseline, 'bench', 'src', 'runner.mjs'),
    };
  }
}

const fmtN = (n) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : `${n}`);

function buildCases(m, o) {
  const s = m.singles;
  const site = (key) => m.sites[key];
  const peers = ['ours', 'crawlee', 'sitemapper', 'sax'];
  const cases = [
    {
      id: 'urlset-doc',
      title: `${fmtN(s.urlset.urls)}-URL urlset, one document, bytes in memory`,
      mode: 'file',
      file: s.urlset.file,
      impls: ['ours', 'sax', 'sax-bare'],
    },
    {
      id: 'urlset-gz-doc',
      title: `${fmtN(s.urlset.urls)}-URL urlset gzipped, one document, bytes in memory`,
      mode: 'file',
      file: s.urlsetGz.file,
      input: s.urlsetGz,
      impls: ['ours', 'sax', 'sax-bare', 'gunzip'],
    },
    {
      id: 'image-doc',
      title: `${fmtN(s.image.urls)}-URL image sitemap, one document, bytes in memory`,
      mode: 'file',
      file: s.image.file,
      input: s.image,
      impls: ['ours', 'sax', 'sax-bare'],
    },
    {
      id: 'news-doc',
      title: `${fmtN(s.news.urls)}-URL Google News sitemap, one document, bytes in memory`,
      mode: 'file',
      file: s.news.file,
      input: s.news,
      impls: ['ours', 'sax', 'sax-bare'],
    },
    {
      id: 'urlset-http',
      title: `${fmtN(s.urlset.urls)}-URL urlset over HTTP`,
      mode: 'http',
      route: '/urlset.xml',
      input: s.urlset,
      impls: peers,
    },
    {
      id: 'urlset-gz-http',
      title: `${fmtN(s.urlset.urls)}-URL urlset gzipped over HTTP`,
      mode: 'http',
      route: '/urlset.xml.gz',
      input: s.urlsetGz,
      impls: peers,
    },
    {
      id: 'image-http',
      title: `${fmtN(s.image.urls)}-URL image sitemap (1-3 images each) over HTTP`,
      mode: 'http',
      route: '/image.xml',
      input: s.image,
      impls: peers,
    },
    {
      id: 'news-http',
      title: `${fmtN(s.news.urls)}-URL Google News sitemap over HTTP`,
      mode: 'http',
      route: '/news.xml',
      input: s.news,
      impls: peers,
    },
  ];
  cases[0].input = s.urlset;
  const scaleKeys = Object.keys(m.sites).filter((k) => k.startsWith('scale-'));
  for (const k of scaleKeys) {
    cases.push({
      id: `site-${fmtN(site(k).urls)}`,
      title: `site of ${fmtN(site(k).urls)} URLs (robots.txt → index → ${site(k).urlsets} gzipped urlset${site(k).urlsets > 1 ? 's' : ''}), streamed`,
      mode: 'site',
      site: k,
      input: site(k),
      impls: peers,
      scale: true,
    });
  }
  cases.push({
    id: 'site-big',
    title: `the ${fmtN(site('big').urls)}-URL site (robots.txt → index → ${site('big').urlsets} gzipped urlsets), streamed`,
    mode: 'site',
    site: 'big',
    input: site('big'),
    impls: ['ours', 'ours-w0', 'ours-w1', 'ours-w2', 'crawlee', 'sitemapper', 'sax', 'gunzip'],
    runs: o.bigRuns,
    scale: true,
    target: 'big',
  });
  cases.push({
    id: 'site-bbc',
    title: `BBC-sized site (robots.txt → 13 sitemaps, ${site('bbc').urlsets} gzipped urlsets, ${fmtN(site('bbc').urls)} URLs), streamed`,
    mode: 'site',
    site: 'bbc',
    input: site('bbc'),
    impls: ['ours', 'ours-w0', 'crawlee', 'sitemapper', 'sax'],
    runs: o.bbcRuns,
    scale: true,
    target: 'bbc',
  });
  const cliImpls = ['cli-tabtree', 'cli-pages', 'cli-ndjson', 'cli-w0', 'cli-report'];
  for (const [key, id] of [
    ['scale-4', 'cli-200k'],
    ['big', 'cli-big'],
    ['bbc', 'cli-bbc'],
  ]) {
    const c = site(key);
    if (c === undefined) continue;
    cases.push({
      id,
      title: `\`usp ls\` as a process on the ${fmtN(c.urls)}-URL site (${c.urlsets} gzipped urlsets), output to /dev/null`,
      mode: 'process',
      site: key,
      input: c,
      impls: [...(id === 'cli-big' ? cliImpls : cliImpls.slice(0, 3)), 'crawlee-proc', 'sax-proc'],
      runs: o.cliRuns,
      cli: true,
    });
  }
  // One-document runs take well under a second and their times are bimodal on this machine (JIT
  // and neighbour noise): more runs steady their medians at little cost.
  const small = o.quick ? o.runs : Math.max(o.runs, 15);
  for (const c of cases) c.runs ??= c.mode === 'file' || c.mode === 'http' ? small : o.runs;
  let out = cases;
  if (o.only) out = out.filter((c) => o.only.includes(c.id));
  if (o.impls)
    for (const c of out) c.impls = c.impls.filter((i) => o.impls.includes(i.replace(/@base$/, '')));
  for (const c of out)
    c.impls = c.impls.flatMap((i) => (IMPLS[`${i}@base`] && !i.endsWith('@base') ? [i, `${i}@base`] : [i]));
  for (const c of out) c.impls = [...new Set(c.impls)];
  return out;
}

function runOnce(task, timeoutMs, runner = path.join(here, 'runner.mjs')) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [runner, JSON.stringify(task)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: benchDir,
      env: { ...process.env, CRAWLEE_LOG_LEVEL: 'ERROR', APIFY_LOG_LEVEL: 'ERROR' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      if (stdout.length > 1e6) stdout = stdout.slice(-1e5);
    });
    child.stderr.on('data', (d) => {
      stderr += d;
      if (stderr.length > 1e6) stderr = stderr.slice(-1e5);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const processMs = performance.now() - t0;
      if (timedOut) {
        resolve({
          ok: false,
          timeout: true,
          error: `no result within ${timeoutMs / 1000} s (killed)`,
          processMs,
        });
        return;
      }
      const line = stdout
        .split('\n')
        .reverse()
        .find((l) => l.startsWith('RESULT '));
      if (line === undefined) {
        const tail = stderr.trim().split('\n').slice(-3).join(' | ');
        resolve({ ok: false, error: `exit ${code ?? signal}, no result: ${tail.slice(0, 400)}`, processMs });
        return;
      }
      resolve({ ...JSON.parse(line.slice(7)), processMs });
    });
  });
}

/**
 * One whole-process run under GNU time: wall time from spawn to exit, user + sys CPU of the
 * process and what it waited for, and the peak RSS of that process tree. stdout goes to /dev/null.
 */
function runProcess(argv, timeoutMs, env) {
  return new Promise((resolve) => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'usp-bench-'));
    const timeFile = path.join(tmp, 'time');
    const devNull = openSync('/dev/null', 'w');
    const t0 = performance.now();
    const child = spawn(
      '/usr/bin/time',
      ['-o', timeFile, '-f', 'TIME %e %U %S %M', process.execPath, ...argv],
      {
        stdio: ['ignore', devNull, 'pipe'],
        cwd: benchDir,
        env: { ...env, CRAWLEE_LOG_LEVEL: 'ERROR', APIFY_LOG_LEVEL: 'ERROR', NO_COLOR: '1' },
      },
    );
    closeSync(devNull);
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
      if (stderr.length > 1e5) stderr = stderr.slice(-1e4);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      const wallMs = performance.now() - t0;
      const text = existsSync(timeFile) ? readFileSync(timeFile, 'utf8') : '';
      rmSync(tmp, { recursive: true, force: true });
      const m = /^TIME (\S+) (\S+) (\S+) (\d+)$/m.exec(text);
      if (timedOut || code !== 0 || m === null) {
        const why = timedOut
          ? `no result within ${timeoutMs / 1000} s (killed)`
          : `exit ${code}: ${stderr.trim().split('\n').slice(-2).join(' | ').slice(0, 300)}`;
        resolve({ ok: false, timeout: timedOut, error: why, processMs: wallMs });
        return;
      }
      const userMs = Number(m[2]) * 1000;
      const sysMs = Number(m[3]) * 1000;
      resolve({
        ok: true,
        urls: null,
        wallMs,
        cpuMs: userMs + sysMs,
        userMs,
        sysMs,
        maxRssKiB: Number(m[4]),
        processMs: wallMs,
      });
    });
  });
}

/**
 * The whole-process cases' environment. `--no-extra-ca-certs` leaves out NODE_EXTRA_CA_CERTS: Node
 * reads and parses that file, and builds its root store, at every process start, before any
 * JavaScript (a 144-certificate bundle: ~0.4 G instructions, ~50 ms of CPU, in every implementation
 * alike); no case uses TLS. A machine that sets it (a proxy's CA) measures each process's fixed
 * cost above what most users pay.
 */
function processEnv(o) {
  if (o.extraCaCerts) return process.env;
  const { NODE_EXTRA_CA_CERTS: _certs, ...env } = process.env;
  return env;
}

function processArgv(impl, task) {
  if (impl.cli !== undefined) {
    return [impl.cliPath ?? USP_CLI, impl.command ?? 'ls', `${task.origin}/`, '--no-progress', ...impl.cli];
  }
  const script = path.join(here, 'proc', impl.script);
  return impl.script === 'sax.mjs' ? [script, task.origin, ...task.documents] : [script, task.origin];
}

/**
 * The order of one round: implementations rotate between rounds; a row and its baseline twin
 * stay back to back (their ratio is taken per round) and swap places every other round.
 */
function roundOrder(impls, r) {
  const groups = [];
  for (const id of impls) {
    const twin = IMPLS[id].twinOf;
    const g = twin !== undefined ? groups.find((x) => x[0] === twin) : undefined;
    if (g) g.push(id);
    else groups.push([id]);
  }
  const rotated = groups.map((_, k) => groups[(k + r) % groups.length]);
  return rotated.flatMap((g) => (r % 2 === 1 ? [...g].reverse() : g));
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? null : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

function summarise(c, implId, runs) {
  const ok = runs.filter((r) => r.ok);
  const failures = runs.filter((r) => !r.ok).map((r) => r.error);
  const res = {
    label: IMPLS[implId].label,
    kind: IMPLS[implId].kind,
    runs,
    okRuns: ok.length,
    failures,
    unsupported: runs.some((r) => r.unsupported),
  };
  if (ok.length === 0) return res;
  const wallMs = median(ok.map((r) => r.wallMs));
  const urlsSeen = ok.map((r) => r.urls).filter((u) => u !== null);
  res.urls = urlsSeen.length > 0 ? median(urlsSeen) : null;
  res.countMismatch = res.urls !== null && res.urls !== c.input.urls;
  res.median = {
    wallMs,
    cpuMs: median(ok.map((r) => r.cpuMs)),
    maxRssKiB: median(ok.map((r) => r.maxRssKiB)),
    processMs: median(ok.map((r) => r.processMs)),
  };
  res.urlsPerS = c.input.urls / (wallMs / 1000);
  res.mbPerS = c.input.bytes / 1e6 / (wallMs / 1000);
  res.usPerUrl = (wallMs * 1000) / c.input.urls;
  res.cpuUsPerUrl = (res.median.cpuMs * 1000) / c.input.urls;
  const extras = ok.map((r) => r.extra).filter(Boolean);
  if (extras.length > 0) res.extra = extras[0];
  return res;
}

function addRatios(c) {
  const wall = (id) => c.results[id]?.median?.wallMs ?? null;
  const floor = wall(c.mode === 'process' ? 'sax-proc' : 'sax');
  for (const r of Object.values(c.results)) {
    if (!r.median) continue;
    r.timeVsFloor = floor ? r.median.wallMs / floor : null;
    r.throughputVsFloor = floor ? floor / r.median.wallMs : null;
    r.peerTimeOverThis = {};
    for (const p of ['crawlee', 'sitemapper']) {
      const peer = wall(p) ?? wall(`${p}-proc`);
      if (peer !== null) r.peerTimeOverThis[p] = peer / r.median.wallMs;
    }
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const log = (...a) => console.log(...a);
  if (o.reportOnly) {
    // Re-renders results.md, the chart and the README section from results.json (no runs).
    const results = JSON.parse(readFileSync(path.join(o.out, 'results.json'), 'utf8'));
    await writeOutputs(results, o, log);
    return;
  }
  const profile = o.quick ? 'quick' : 'full';
  const dataDir = path.join(benchDir, '.data');
  const t0 = Date.now();
  const loadBefore = os.loadavg();
  const manifest = await ensureData(dataDir, profile, log);
  addBaselineImpls(o);
  const dir = path.join(dataDir, profile);
  const cases = buildCases(manifest, o);
  const singleRoutes = {};
  for (const d of Object.values(manifest.singles))
    singleRoutes[`/${path.basename(d.file)}`] = { file: d.file };

  // The whole-process cases (`usp ls` on the 200k, 1M and 2.6M sites) run together, in the same
  // rounds: each implementation's runs on the different sites back to back (site order swapped
  // every round), so a per-URL ratio between two sites is taken within one round, not across
  // two time windows of a machine that drifts between a fast and a slow state.
  const groups = [];
  const processCases = cases.filter((c) => c.mode === 'process');
  for (const c of cases) {
    if (c.mode !== 'process') groups.push([c]);
    else if (c === processCases[0]) groups.push(processCases);
  }
  for (const group of groups) {
    const servers = [];
    const runs = {};
    for (const c of group) {
      const routes = c.mode === 'site' || c.mode === 'process' ? manifest.sites[c.site].routes : singleRoutes;
      servers.push(c.mode === 'file' ? null : await startSiteServer(dir, routes));
      log(`\n${c.title}  [${c.impls.length} implementations × ${c.runs} runs]`);
      runs[c.id] = Object.fromEntries(c.impls.map((i) => [i, []]));
    }
    if (group.length > 1) log(`(these ${group.length} cases run in the same rounds, site after site)`);
    const impls = [...new Set(group.flatMap((c) => c.impls))];
    const rounds = Math.max(...group.map((c) => c.runs));
    for (let r = 0; r < rounds; r++) {
      // Alternate, and rotate the order each round so no implementation always goes first.
      const order = roundOrder(impls, r);
      for (const implId of order) {
        const sites = group.map((c, k) => [c, servers[k]]);
        if (r % 2 === 1) sites.reverse();
        for (const [c, server] of sites) {
          const mine = runs[c.id][implId];
          if (mine === undefined || r >= c.runs) continue;
          if (mine.some((x) => x.unsupported || x.timeout)) continue;
          const impl = IMPLS[implId];
          const task = {
            impl: impl.module,
            mode: c.mode,
            dataDir: dir,
            file: c.file,
            url: server && c.route ? server.origin + c.route : undefined,
            origin: server?.origin,
            documents:
              c.mode === 'site' || c.mode === 'process' ? manifest.sites[c.site].documents : undefined,
            workers: impl.workers,
            handlers: impl.handlers,
            timeoutMs: o.timeoutS * 1000,
          };
          const res =
            c.mode === 'process'
              ? await runProcess(processArgv(impl, task), o.timeoutS * 1000, processEnv(o))
              : await runOnce(task, o.timeoutS * 1000, impl.runner);
          res.round = r;
          mine.push(res);
          const msg = res.ok
            ? `${(res.wallMs / 1000).toFixed(2)} s wall, ${(res.cpuMs / 1000).toFixed(2)} s CPU, ${(res.maxRssKiB / 1024).toFixed(0)} MiB, ${res.urls ?? '-'} URLs`
            : `FAILED: ${res.error}`;
          const where = group.length > 1 ? `${c.id} ` : '';
          log(`  run ${r + 1} ${where}${impl.label.padEnd(34)} ${msg}`);
        }
      }
    }
    for (const server of servers) await server?.close();
    for (const c of group) {
      c.results = Object.fromEntries(c.impls.map((i) => [i, summarise(c, i, runs[c.id][i])]));
      c.sameRounds = group.length > 1 ? group.map((x) => x.id) : null;
      addRatios(c);
    }
  }

  const results = {
    generatedAt: new Date().toISOString(),
    command: `pnpm bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    profile,
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      memGiB: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      platform: `${process.platform} ${os.release()}`,
      // Other processes compete for the 2 cores: wall times mean little when these are high.
      loadAverage1mBefore: Number(loadBefore[0].toFixed(2)),
      loadAverage1mAfter: Number(os.loadavg()[0].toFixed(2)),
    },
    options: { runs: o.runs, bigRuns: o.bigRuns, bbcRuns: o.bbcRuns, timeoutS: o.timeoutS },
    versions: {
      '@crawlee/utils': pkgVersion('@crawlee/utils'),
      sitemapper: pkgVersion('sitemapper'),
      sax: pkgVersion('sax'),
      usp: pkgVersion('usp'),
    },
    dataset: { generatorVersion: manifest.version, seed: manifest.seed },
    cases: cases.map((c) => ({
      id: c.id,
      title: c.title,
      mode: c.mode,
      urls: c.input.urls,
      bytes: c.input.bytes,
      fileBytes: c.input.fileBytes,
      runs: c.runs,
      target: c.target ?? null,
      scale: c.scale ?? false,
      cli: c.cli ?? false,
      // The cases whose rounds this one shared (each implementation site after site), or null.
      sameRounds: c.sameRounds ?? null,
      results: c.results,
    })),
    totalSeconds: (Date.now() - t0) / 1000,
    // Every input and implementation ran (no --only / --impls).
    complete: !o.only && !o.impls,
  };
  await writeOutputs(results, o, log);
}

async function writeOutputs(results, o, log) {
  mkdirSync(o.out, { recursive: true });
  const { md, targets } = renderMarkdown(results);
  results.targets = targets;
  writeFileSync(path.join(o.out, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(path.join(o.out, 'results.md'), md);
  if (o.chart) {
    try {
      const { renderChart } = await import('./chart.mjs');
      await renderChart(results, o.out);
    } catch (e) {
      log(`chart not rendered: ${e.message}`);
    }
  }
  // Only a complete default-profile run speaks for the project in its README.
  if (results.profile === 'full' && results.complete && o.out === path.join(benchDir, 'results')) {
    const readmeFile = path.join(benchDir, '..', 'README.md');
    try {
      const next = spliceReadme(readFileSync(readmeFile, 'utf8'), renderReadmeSection(results));
      if (next !== null) {
        writeFileSync(readmeFile, next);
        log('updated the Performance section of README.md');
      }
    } catch (e) {
      log(`README.md not updated: ${e.message}`);
    }
  }
  log(`\nwrote ${path.join(o.out, 'results.md')} (${results.totalSeconds.toFixed(0)} s in all)`);
  for (const t of targets) log(`  ${t.status.padEnd(4)} ${t.name}: ${t.detail}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
