// Where PostgreSQL's statement time goes in one 5 %-removed run (issue 33): a private cluster of
// Debian's PostgreSQL 15 (as tools/test-postgres makes it, fsync off) with pg_stat_statements
// (track_planning on, statements inside functions tracked), the batch case's farm (seed 17, 3 sites
// of 50,000 URLs), a fresh run of `usp batch`, `farm.remove(0.05, 29)`, CHECKPOINT, the statistics
// reset, the removed run; then its statements by plan + execution time (execution includes waits
// for locks and for COPY data). `--perf FILE`: `perf record -a -g` over the removed run.
// Usage: node src/postgres-statements.mjs CLI [--perf FILE]
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSiteFarm } from '@usp-ts/test-server';
import { processTreeCpuS } from './process-cpu.mjs';
import { spawnTimed } from './timed.mjs';

const [cli, flag, perfOut] = process.argv.slice(2);
if (cli === undefined) throw new Error('usage: node src/postgres-statements.mjs CLI [--perf FILE]');
const BIN = process.env.USP_PG_BIN ?? '/usr/lib/postgresql/15/bin';
// PostgreSQL refuses to run as root: then the cluster is the postgres user's.
const asRoot = process.getuid?.() === 0;
const user = asRoot
  ? {
      uid: Number(execFileSync('id', ['-u', 'postgres'])),
      gid: Number(execFileSync('id', ['-g', 'postgres'])),
    }
  : {};
const dir = mkdtempSync(join(asRoot ? '/tmp' : tmpdir(), 'usp-pg-stat-'));
if (asRoot) chownSync(dir, user.uid, user.gid);
const data = join(dir, 'data');
execFileSync(
  join(BIN, 'initdb'),
  ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'],
  { ...user, stdio: 'ignore' },
);
// A port nobody listens on now (the OS picks it).
const port = await new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address();
    probe.close(() => resolve(port));
  });
});
const settings = [
  'listen_addresses=127.0.0.1',
  `unix_socket_directories=${dir}`,
  'fsync=off',
  'synchronous_commit=off',
  'full_page_writes=off',
  'max_connections=200',
  'shared_preload_libraries=pg_stat_statements',
  'pg_stat_statements.track_planning=on',
  'pg_stat_statements.track=all',
];
const server = spawn(
  join(BIN, 'postgres'),
  ['-D', data, '-p', String(port), ...settings.flatMap((s) => ['-c', s])],
  {
    ...user,
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);
await new Promise((resolve, reject) => {
  let log = '';
  server.once('exit', (code) => reject(new Error(`postgres exited (${code}): ${log.slice(-400)}`)));
  const onData = (d) => {
    log += d;
    if (/ready to accept connections/.test(log)) resolve();
  };
  server.stdout.setEncoding('utf8').on('data', onData);
  server.stderr.setEncoding('utf8').on('data', onData);
});
const base = `postgres://postgres@127.0.0.1:${port}`;
const psql = (db, sql) =>
  execFileSync(join(BIN, 'psql'), [`${base}/${db}`, '-v', 'ON_ERROR_STOP=1', '-tAc', sql]).toString();
const farm = await startSiteFarm({ sites: 1000, seed: 17, bigSites: 3 });
const work = mkdtempSync(join(tmpdir(), 'usp-pg-stat-'));
const sitesFile = join(work, 'sites.txt');
writeFileSync(sitesFile, farm.sitesFile());
const FLAGS = ['--sites', '16', '--per-host', '2', '--site-deadline', '60s'];
const NET = ['--allow-private-networks', '--timeout', '10s', '--retries', '2'];
const run = async () => {
  const server0 = processTreeCpuS(server.pid);
  const t = await spawnTimed(process.execPath, [
    cli,
    'batch',
    '--out',
    `${base}/runs`,
    ...FLAGS,
    ...NET,
    sitesFile,
  ]).done;
  if (t.code !== 0) throw new Error(`exit ${t.code}: ${t.stderr.slice(-400)}`);
  const serverCpuS = processTreeCpuS(server.pid) - server0;
  return {
    wallS: t.wallS,
    cpuS: Number(t.cpuS.toFixed(2)),
    peakRssMiB: Math.round(t.peakRssMiB),
    serverCpuS: Number(serverCpuS.toFixed(2)),
    load: loadavg()[0],
  };
};
try {
  psql('postgres', 'CREATE DATABASE runs');
  psql('runs', 'CREATE EXTENSION pg_stat_statements');
  console.log('fresh', JSON.stringify(await run()));
  farm.remove(0.05, 29);
  psql('runs', 'CHECKPOINT');
  psql('runs', 'SELECT pg_stat_statements_reset()');
  const perf =
    flag === '--perf'
      ? spawn('perf', ['record', '-a', '-g', '-F', '1999', '-o', perfOut], { stdio: 'ignore' })
      : null;
  console.log('removed', JSON.stringify(await run()));
  if (perf !== null) {
    perf.kill('SIGINT');
    await new Promise((resolve) => perf.on('exit', resolve));
  }
  console.log('plan ms | execution ms | calls | statement');
  console.log(
    psql(
      'runs',
      `SELECT round(total_plan_time::numeric, 1), round(total_exec_time::numeric, 1), calls,
         left(regexp_replace(query, '\\s+', ' ', 'g'), 150)
       FROM pg_stat_statements ORDER BY total_plan_time + total_exec_time DESC LIMIT 25`,
    ),
  );
  console.log(
    'top-level statements: plan ms | execution ms | calls\n',
    psql(
      'runs',
      `SELECT round(sum(total_plan_time)::numeric, 1), round(sum(total_exec_time)::numeric, 1), sum(calls)
       FROM pg_stat_statements WHERE toplevel`,
    ),
  );
} finally {
  await farm.close();
  server.kill('SIGINT');
  await new Promise((resolve) => server.on('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
}
