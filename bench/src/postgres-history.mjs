// Does a PostgreSQL store's history slow its 5 %-removed run? `usp batch` into two databases of
// one cluster: f gets the fresh run only, h the fresh, no-change and 10 %-changed runs (as in
// batch-stores.mjs), then 5 % of the pages are removed and each removed run walks a
// `CREATE DATABASE … TEMPLATE` copy of f or of h (alternated, as postgres-pair.mjs's copies), and
// a last one walks h itself. Prints each run's wall, client CPU (GNU time), server CPU (its
// processes', as postgres-pair.mjs counts it), checkpoints during it and peak RSS, then the medians.
// Usage: node src/postgres-history.mjs   (PAIRS=3, CLI=this checkout's packages/usp/dist/cli.js)
import { mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestPostgres } from '@usp-ts/test-postgres';
import { startSiteFarm } from '@usp-ts/test-server';
import { processTreeCpuS } from './process-cpu.mjs';
import { spawnTimed } from './timed.mjs';

const CLI = process.env.CLI ?? fileURLToPath(new URL('../../packages/usp/dist/cli.js', import.meta.url));
const FLAGS = [
  '--sites',
  '16',
  '--per-host',
  '2',
  '--site-deadline',
  '60s',
  '--allow-private-networks',
  '--timeout',
  '10s',
  '--retries',
  '2',
];
const PAIRS = Number(process.env.PAIRS ?? 3);
const farm = await startSiteFarm({ sites: 1000, seed: 17, bigSites: 3 });
const pg = await startTestPostgres();
const work = mkdtempSync(join(tmpdir(), 'usp-hist-'));
const sitesFile = join(work, 'sites.txt');
writeFileSync(sitesFile, farm.sitesFile());
const serverCpuS = () => processTreeCpuS(pg.pid);
const ckpt = async () =>
  Number((await pg.query(pg.url, 'SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter'))[0]);
async function run(label, url) {
  const s0 = serverCpuS();
  const c0 = await ckpt();
  const t = await spawnTimed(process.execPath, [CLI, 'batch', '--out', url, ...FLAGS, sitesFile]).done;
  if (t.code !== 0) throw new Error(`${label}: exit ${t.code}: ${t.stderr.slice(-400)}`);
  const row = {
    label,
    wallS: t.wallS,
    cpuS: Number(t.cpuS.toFixed(2)),
    serverS: Number((serverCpuS() - s0).toFixed(2)),
    ckpts: (await ckpt()) - c0,
    rss: Math.round(t.peakRssMiB),
    load: Number(loadavg()[0].toFixed(2)),
  };
  console.log(JSON.stringify(row));
  return row;
}
let n = 0;
const copyOf = async (url) => {
  const name = `c${n++}`;
  await pg.query(pg.url, `CREATE DATABASE ${name} TEMPLATE ${url.slice(url.lastIndexOf('/') + 1)}`);
  return url.replace(/\/[^/]+$/, `/${name}`);
};
try {
  const h = await pg.createDatabase('h');
  const f = await pg.createDatabase('f');
  await run('fresh h', h);
  await run('fresh f', f);
  await run('no-change h', h);
  farm.change(0.1, 23);
  await run('changed h', h);
  farm.remove(0.05, 29);
  const rows = { f: [], h: [] };
  for (let i = 0; i < PAIRS; i++) {
    for (const k of i % 2 === 0 ? ['f', 'h'] : ['h', 'f'])
      rows[k].push(await run(`removed ${k} copy`, await copyOf(k === 'f' ? f : h)));
  }
  await run('removed h in place', h);
  const med = (xs) => {
    const v = [...xs].sort((a, b) => a - b);
    return v[(v.length - 1) >> 1];
  };
  for (const k of ['f', 'h'])
    console.log(
      k,
      ['wallS', 'cpuS', 'serverS'].map((m) => `${m} ${med(rows[k].map((r) => r[m]))}`).join(' '),
    );
  for (const db of ['f', 'h'])
    console.log(
      db,
      (
        await pg.query(
          `${pg.url.replace(/\/postgres$/, '/')}${db}`,
          `SELECT string_agg(relname || ' ' || pg_size_pretty(pg_total_relation_size(oid)), ', ') FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace`,
        )
      )[0],
    );
} finally {
  await farm.close();
  await pg.stop();
}
