// Two builds of `usp batch` into one PostgreSQL, paired: the 1,000-site farm of the batch case
// (seed 17, 3 sites of 50,000 URLs), runs alternated A B, B A, ... so that the machine's drift
// falls on both. `--run no-change`: one fresh run (B) first, then each pair walks the same state
// with nothing changed; `--run fresh`: each run into a new database. Prints each run (wall, CPU of
// the process tree, peak RSS; GNU time; and the server's CPU: its processes' own and their
// reaped children's, before and after the run, so a backend's work after the run ends falls on the
// next run) and the medians of the per-pair ratios. For a change whose effect is inside the
// spread of batch-stores.mjs's rounds on a busy machine. With `--run no-change` each side has a
// database of its own (a build may refuse the other's schema), filled by its own fresh run.
// `--run removed`: each side's fresh run fills a database of its own, then 5 % of the pages are
// removed (as in batch-stores.mjs), and each run after that walks a copy of its side's database
// (`CREATE DATABASE … TEMPLATE`), the state from before the removal.
// Usage: node src/postgres-pair.mjs --a OLD/packages/usp/dist/cli.js [--b CLI] [--run no-change|fresh|removed]
//          [--pairs N] [--env-a K=V] [--env-b K=V]
// (B defaults to this checkout's CLI; --env-a / --env-b set one environment variable for that side.)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startTestPostgres } from '@usp-ts/test-postgres';
import { startSiteFarm } from '@usp-ts/test-server';
import { processTreeCpuS } from './process-cpu.mjs';
import { spawnTimed } from './timed.mjs';

const ARGS = process.argv.slice(2).filter((a, i) => !(i === 0 && a === '--'));
const { values } = parseArgs({
  args: ARGS,
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: fileURLToPath(new URL('../../packages/usp/dist/cli.js', import.meta.url)) },
    run: { type: 'string', default: 'no-change' },
    pairs: { type: 'string', default: '6' },
    'env-a': { type: 'string' },
    'env-b': { type: 'string' },
  },
});
if (values.a === undefined)
  throw new Error('--a CLI is required (the other build of packages/usp/dist/cli.js)');
if (!['no-change', 'fresh', 'removed'].includes(values.run))
  throw new Error('--run: no-change, fresh or removed');
const side = (cli, env) => ({ cli, env: env === undefined ? {} : Object.fromEntries([env.split('=', 2)]) });
const SIDES = { A: side(values.a, values['env-a']), B: side(values.b, values['env-b']) };
/** `usp batch` as batch-stores.mjs --cli runs it. */
const FLAGS = ['--sites', '16', '--per-host', '2', '--site-deadline', '60s'];
const NET = ['--allow-private-networks', '--timeout', '10s', '--retries', '2'];

const farm = await startSiteFarm({ sites: 1000, seed: 17, bigSites: 3 });
const pg = await startTestPostgres();
const work = mkdtempSync(join(tmpdir(), 'usp-pg-pair-'));
const sitesFile = join(work, 'sites.txt');
writeFileSync(sitesFile, farm.sitesFile());
let databases = 0;
const database = () => pg.createDatabase(`pair${databases++}`);

const serverCpuS = () => processTreeCpuS(pg.pid);

async function run(name, url) {
  const { cli, env } = SIDES[name];
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    const server0 = serverCpuS();
    const t = await spawnTimed(process.execPath, [cli, 'batch', '--out', url, ...FLAGS, ...NET, sitesFile])
      .done;
    const serverS = serverCpuS() - server0;
    if (t.code !== 0) throw new Error(`${name}: exit ${t.code}: ${t.stderr.slice(-400)}`);
    const row = {
      side: name,
      wallS: t.wallS,
      cpuS: Number(t.cpuS.toFixed(2)),
      rssMiB: Math.round(t.peakRssMiB),
      serverCpuS: Number(serverS.toFixed(2)),
    };
    console.log(JSON.stringify({ ...row, load: Number(loadavg()[0].toFixed(2)) }));
    return row;
  } finally {
    for (const k of Object.keys(env)) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
}

const median = (xs) => {
  const v = [...xs].sort((x, y) => x - y);
  return v.length % 2 === 1 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};
try {
  const own = values.run !== 'fresh' ? { A: await database(), B: await database() } : null;
  if (own !== null) for (const name of ['A', 'B']) await run(name, own[name]);
  if (values.run === 'removed') farm.remove(0.05, 29);
  /** A copy of `url`'s database (the state before the removal), for one removed run. */
  const copyOf = async (url) => {
    const name = `pair${databases++}`;
    await pg.query(
      url.replace(/\/[^/]+$/, '/postgres'),
      `CREATE DATABASE ${name} TEMPLATE ${url.slice(url.lastIndexOf('/') + 1)}`,
    );
    return url.replace(/\/[^/]+$/, `/${name}`);
  };
  const target = async (name) =>
    own === null ? await database() : values.run === 'removed' ? await copyOf(own[name]) : own[name];
  const rows = { A: [], B: [] };
  for (let i = 0; i < Number(values.pairs); i++) {
    for (const name of i % 2 === 0 ? ['A', 'B'] : ['B', 'A']) {
      rows[name].push(await run(name, await target(name)));
    }
  }
  const ratios = (k) => rows.A.map((a, i) => rows.B[i][k] / a[k]);
  const range = (xs) =>
    `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)})`;
  for (const name of ['A', 'B']) {
    const mine = rows[name];
    console.log(
      `${name}: wall ${median(mine.map((r) => r.wallS)).toFixed(2)} s, CPU ${median(mine.map((r) => r.cpuS)).toFixed(2)} s, server CPU ${median(mine.map((r) => r.serverCpuS)).toFixed(2)} s, peak RSS ${Math.max(...mine.map((r) => r.rssMiB))} MiB`,
    );
  }
  console.log(
    `B ÷ A per pair: wall ${range(ratios('wallS'))}, CPU ${range(ratios('cpuS'))}, server CPU ${range(ratios('serverCpuS'))}`,
  );
} finally {
  await farm.close();
  await pg.stop();
  rmSync(work, { recursive: true, force: true });
}
