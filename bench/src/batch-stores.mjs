// The result stores of issue 33 beside NDJSON, in the same rounds: the batch of N sites (default
// 1,000, the site farm of the batch case) into NDJSON (+ SQLite state), into one SQLite file
// (rows and state) and into PostgreSQL (rows and state; a private cluster of tools/test-postgres,
// fsync off), fresh, then with nothing changed, then after 10 % of the urlsets changed, then after
// 5 % of the pages were removed (`--runs` picks). Each run is a child process under GNU time
// (wall, CPU of the process tree, peak RSS; PostgreSQL's own CPU is not the child's and is not
// counted). Page rows are read back from each store as a stream (pages.ndjson line by line, the
// SQL stores through their readers) and checked against the generator's ground truth: all its
// pages fresh, none with nothing changed, exactly its new and changed pages, exactly its removed
// pages. Results: results/batch-stores.md.
// Usage: node src/batch-stores.mjs [--sites N] [--big N] [--rounds N] [--runs fresh,no-change,changed,removed]
//          [--stores ndjson,sqlite,postgres] [--cpu-prof DIR] [--cli]
// --cli: each run is `usp batch -v --out …` (packages/usp/dist/cli.js, its own V8 settings: 4 MiB
// semi-spaces, the batch's JIT budget) instead of the library in src/store-run.mjs.
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readSqlitePageRows } from '@usp-ts/state-sqlite';
import { readPageRows } from '@usp-ts/store-postgres';
import { startTestPostgres } from '@usp-ts/test-postgres';
import { startSiteFarm } from '@usp-ts/test-server';
import { spawnTimed } from './timed.mjs';

const ARGS = process.argv.slice(2).filter((a, i) => !(i === 0 && a === '--'));
const { values } = parseArgs({
  args: ARGS,
  options: {
    sites: { type: 'string', default: '1000' },
    big: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '1' },
    runs: { type: 'string', default: 'fresh,no-change,changed,removed' },
    stores: { type: 'string', default: 'ndjson,sqlite,postgres' },
    'cpu-prof': { type: 'string' },
    cli: { type: 'boolean', default: false },
    md: { type: 'string', default: fileURLToPath(new URL('../results/batch-stores.md', import.meta.url)) },
  },
});
const RUN = fileURLToPath(new URL('./store-run.mjs', import.meta.url));
const CLI = fileURLToPath(new URL('../../packages/usp/dist/cli.js', import.meta.url));
/** `usp batch` as the library run drives it (src/store-run.mjs): 16 sites, 2 per host, … */
const CLI_FLAGS = ['--sites', '16', '--per-host', '2', '--site-deadline', '60s'];
const NET = ['--allow-private-networks', '--timeout', '10s', '--retries', '2'];
/** The command of one store run: the library (store-run.mjs) or, with --cli, `usp batch`. */
function runArgs(kind, target, extra) {
  if (!values.cli) return [RUN, kind, target, extra, sitesFile];
  const state = kind === 'ndjson' ? ['--state', extra] : [];
  return [CLI, 'batch', '-v', '--out', target, ...state, ...CLI_FLAGS, ...NET, sitesFile];
}
const n = Number(values.sites);
const rounds = Number(values.rounds);
const farm = await startSiteFarm({ sites: n, seed: 17, bigSites: Number(values.big) });
const pg = await startTestPostgres();
const work = mkdtempSync(join(tmpdir(), 'usp-stores-bench-'));
const sitesFile = join(work, 'sites.txt');
writeFileSync(sitesFile, farm.sitesFile());
const truth = farm.allPages();
// The hung and the refused host: a fresh run waits out their timeouts (two 10 s requests), so its
// wall is theirs, not the stores'; the bench also times each run to the last of the other sites.
const failing = new Set(
  farm.sites.filter((s) => s.kind === 'hang' || s.kind === 'refuse').map((s) => s.homepage),
);
console.log(`${n} sites, ${truth.size} page URLs; load average ${loadavg()[0].toFixed(1)}`);

/** A run's page rows as URLs by change, read as a stream (pages.ndjson can pass 1 GB at 10,000 sites). */
async function rowsOf(kind, where, run) {
  const byChange = new Map();
  let count = 0;
  const add = (r) => {
    count++;
    if (!byChange.has(r.change)) byChange.set(r.change, new Set());
    byChange.get(r.change).add(r.url);
  };
  if (kind === 'ndjson') {
    const lines = createInterface({
      input: createReadStream(join(where, 'pages.ndjson')),
      crlfDelay: Infinity,
    });
    for await (const line of lines) if (line !== '') add(JSON.parse(line));
  } else if (kind === 'sqlite') {
    for (const r of readSqlitePageRows(where, { run: 'latest' })) add(r);
  } else {
    // `usp batch` names its PostgreSQL run itself: the one just written is the latest.
    for await (const r of readPageRows(where, { run: values.cli ? 'latest' : run })) add(r);
  }
  return { count, byChange };
}

const same = (a, b) => a.size === b.size && [...a].every((x) => b.has(x));
const none = new Set();
/** What the generator says a run must write: URLs by change. */
let expected = null;

const KINDS = new Set(values.stores.split(','));
/** `--cpu-prof DIR`: each store run writes a V8 CPU profile there (its CPU time then includes the profiler's). */
const PROF = values['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof']];
const stores = [];
for (let r = 0; r < rounds; r++) {
  const sqlite = join(work, `r${r}.sqlite`);
  const pgUrl = await pg.createDatabase(`r${r}`);
  stores.push(
    {
      kind: 'ndjson',
      round: r,
      target: (run) => join(work, `r${r}-${run}`),
      extra: join(work, `r${r}-state.sqlite`),
    },
    { kind: 'sqlite', round: r, target: () => sqlite, extra: '-' },
    { kind: 'postgres', round: r, target: () => pgUrl, extra: null },
  );
}
stores.splice(0, stores.length, ...stores.filter((s) => KINDS.has(s.kind)));
const RUNS = values.runs.split(',');
const rows = [];
try {
  for (const run of RUNS) {
    if (run === 'fresh') expected = new Map([['new', truth]]);
    else if (run === 'no-change') expected = new Map();
    else if (run === 'changed') {
      const c = farm.change(0.1, 23);
      expected = new Map([
        ['new', c.newPages],
        ['changed', c.changedPages],
      ]);
    } else if (run === 'removed') expected = new Map([['removed', farm.remove(0.05, 29)]]);
    else throw new Error(`unknown run ${run}`);
    for (const s of stores) {
      farm.resetCounters();
      const target = s.target(run);
      const extra = s.kind === 'postgres' ? `${run}` : s.extra;
      const t = await spawnTimed(process.execPath, [...PROF, ...runArgs(s.kind, target, extra)], {
        stdout: 'pipe',
      }).done;
      if (t.code !== 0) throw new Error(`${s.kind} ${run}: exit ${t.code}: ${t.stderr.slice(-500)}`);
      const got = await rowsOf(s.kind, target, run);
      // Exactly the generator's pages for each change it made; `unchanged` rows (the other pages
      // of a sitemap read again) are allowed beside them.
      const exact =
        [...expected].every(([c, urls]) => same(got.byChange.get(c) ?? none, urls)) &&
        [...got.byChange.keys()].every((c) => c === 'unchanged' || expected.has(c));
      // When the last site but the hung and the refused one ended (store-run.mjs's stderr lines).
      const ends = t.lines.filter((l) => /^usp: \S+: /.test(l.text));
      const othersDoneS = Math.max(
        0,
        ...ends.filter((l) => !failing.has(/^usp: (\S+): /.exec(l.text)[1])).map((l) => l.at),
      );
      const row = {
        run,
        store: s.kind,
        round: s.round,
        wallS: t.wallS,
        othersDoneS: Number(othersDoneS.toFixed(2)),
        cpuS: t.cpuS,
        rssMiB: t.peakRssMiB,
        rows: got.count,
        changes: Object.fromEntries([...got.byChange].map(([c, u]) => [c, u.size])),
        exact,
        load: loadavg()[0],
      };
      const memory = /memory peaks MiB (.*)/.exec(t.stderr);
      if (memory !== null) row.memory = JSON.parse(memory[1]);
      rows.push(row);
      console.log(JSON.stringify(row));
    }
  }
} finally {
  await farm.close();
  await pg.stop();
  rmSync(work, { recursive: true, force: true });
}
const median = (xs) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 === 1 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};
const pick = (run, store, k) =>
  median(rows.filter((r) => r.run === run && r.store === store).map((r) => r[k]));
/** The row of a run, store and round. */
const rowOf = (run, store, round) =>
  rows.find((r) => r.run === run && r.store === store && r.round === round);
/**
 * `a ÷ b` of `k` in each round (each round's runs back to back: this machine drifts between a fast
 * and a slow state), median and range.
 */
const perRound = (a, b, k) => {
  const xs = [];
  for (let r = 0; r < rounds; r++) {
    const x = rowOf(...a, r);
    const y = rowOf(...b, r);
    if (x !== undefined && y !== undefined && y[k] > 0) xs.push(x[k] / y[k]);
  }
  if (xs.length === 0) return '–';
  const range = xs.length > 1 ? ` (${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)})` : '';
  return `${median(xs).toFixed(2)}${range}`;
};
const lines = [
  '| run | store | wall s | to the last other site s | CPU s | peak RSS MiB (max) | page rows | ÷ NDJSON wall | ÷ NDJSON CPU |',
  '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
];
for (const run of RUNS) {
  for (const store of ['ndjson', 'sqlite', 'postgres'].filter((k) => KINDS.has(k))) {
    const mine = rows.filter((r) => r.run === run && r.store === store);
    const exact = mine.every((r) => r.exact);
    const maxRss = Math.max(...mine.map((r) => r.rssMiB));
    lines.push(
      `| ${run} | ${store} | ${pick(run, store, 'wallS').toFixed(2)} | ${pick(run, store, 'othersDoneS').toFixed(2)} | ${pick(run, store, 'cpuS').toFixed(2)} | ${pick(run, store, 'rssMiB').toFixed(0)} (${maxRss.toFixed(0)}) | ${pick(run, store, 'rows')}${exact ? ' (= ground truth)' : ' (≠ ground truth)'} | ${perRound([run, store], [run, 'ndjson'], 'wallS')} | ${perRound([run, store], [run, 'ndjson'], 'cpuS')} |`,
    );
  }
}
if (RUNS.includes('no-change') && RUNS.includes('fresh')) {
  lines.push(
    '',
    '| store | fresh ÷ no change: wall | to the last other site | CPU |',
    '| --- | ---: | ---: | ---: |',
  );
  for (const store of ['ndjson', 'sqlite', 'postgres'].filter((k) => KINDS.has(k))) {
    const a = ['fresh', store];
    const b = ['no-change', store];
    lines.push(
      `| ${store} | ${perRound(a, b, 'wallS')} | ${perRound(a, b, 'othersDoneS')} | ${perRound(a, b, 'cpuS')} |`,
    );
  }
}
const loads = rows.map((r) => r.load);
const md = `${n} sites, ${truth.size} page URLs, ${rounds} round(s), medians (ratios: medians of the per-round ratios, range); load average ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}.\n\n${lines.join('\n')}\n`;
writeFileSync(values.md, md);
console.log(md);
