// Issue 33's distributed case: N sites (default 1,000, the batch case's farm: seed 17, 3 sites of
// 50,000 URLs) walked by three `usp worker --out postgres://…` processes fed by `usp batch --queue`,
// one worker killed with -9 once it has finished K sites (default 100), and the same list enqueued
// a second time by another producer once the kill is done. Then a plain `SELECT count(*)` of the
// page rows against the generator's ground truth: every page exactly once, whatever the kill and
// the second enqueue did. Redis and PostgreSQL are private servers (tools/test-redis,
// tools/test-postgres, fsync off). Results: results/workers-postgres.md.
// Usage: node src/workers-postgres.mjs [--sites N] [--big N] [--kill-after K]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startTestPostgres } from '@usp-ts/test-postgres';
import { startTestRedis } from '@usp-ts/test-redis';
import { startSiteFarm } from '@usp-ts/test-server';

const ARGS = process.argv.slice(2).filter((a, i) => !(i === 0 && a === '--'));
const { values } = parseArgs({
  args: ARGS,
  options: {
    sites: { type: 'string', default: '1000' },
    big: { type: 'string', default: '3' },
    'kill-after': { type: 'string', default: '100' },
    md: {
      type: 'string',
      default: fileURLToPath(new URL('../results/workers-postgres.md', import.meta.url)),
    },
  },
});
const CLI = fileURLToPath(new URL('../../packages/usp/dist/cli.js', import.meta.url));
const NET = ['--allow-private-networks', '--timeout', '10s', '--retries', '2', '--site-deadline', '60s'];
const n = Number(values.sites);
const killAfter = Number(values['kill-after']);

const loadBefore = loadavg()[0];
const farm = await startSiteFarm({ sites: n, seed: 17, bigSites: Number(values.big) });
const [redis, pg] = await Promise.all([startTestRedis(), startTestPostgres()]);
const work = mkdtempSync(join(tmpdir(), 'usp-workers-pg-'));
const sitesFile = join(work, 'sites.txt');
writeFileSync(sitesFile, farm.sitesFile());
const truth = farm.allPages();
const url = await pg.createDatabase('bench');
console.log(`${n} sites, ${truth.size} page URLs; load average ${loadBefore.toFixed(1)}`);

function start(args) {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => {
    stderr += d;
  });
  return { child, stderr: () => stderr, closed: once(child, 'close').then(([code]) => code) };
}
const worker = (id) =>
  start([
    'worker',
    '--queue',
    redis.url,
    '--queue-name',
    'bench',
    '--out',
    url,
    '--worker-id',
    id,
    '--sites',
    '16',
    '--per-host',
    '2',
    '--lock-duration',
    '5s',
    '-v',
    ...NET,
  ]);
const produce = () => start(['batch', '--queue', redis.url, '--queue-name', 'bench', sitesFile]);
const sitesDone = (p) => (p.stderr().match(/^usp: https?:\/\/\S+: /gm) ?? []).length;

const t0 = performance.now();
let result;
try {
  const workers = ['w1', 'w2', 'w3'].map(worker);
  const first = produce();
  // Killed mid-run: once it has finished killAfter sites, with 16 more in flight.
  await new Promise((resolve, reject) => {
    const check = () => {
      if (sitesDone(workers[0]) >= killAfter) {
        workers[0].child.stderr.off('data', check);
        resolve();
      }
    };
    workers[0].child.stderr.on('data', check);
    workers[0].child.once('close', () => reject(new Error(`w1 ended: ${workers[0].stderr().slice(-500)}`)));
  });
  workers[0].child.kill('SIGKILL');
  const killedAt = (performance.now() - t0) / 1000;
  const second = produce();
  const codes = [await first.closed, await second.closed];
  const producersS = (performance.now() - t0) / 1000;
  for (const w of workers.slice(1)) w.child.kill('SIGTERM');
  for (const w of workers.slice(1)) await w.closed;
  if (codes.some((c) => c !== 0)) throw new Error(`producers exit ${codes}: ${second.stderr().slice(-500)}`);
  const q = async (sql) => (await pg.query(url, sql))[0];
  const pageRows = Number(await q('SELECT count(*) FROM page_rows'));
  const distinct = Number(await q('SELECT count(DISTINCT url) FROM page_rows'));
  const siteRows = Number(await q('SELECT count(*) FROM site_rows'));
  const runs = Number(await q('SELECT count(*) FROM runs'));
  const missing = Number(
    await q(`SELECT count(*) FROM site_rows WHERE status <> 'ok' AND status <> 'unreachable'`),
  );
  result = {
    sites: n,
    truth: truth.size,
    pageRows,
    distinct,
    siteRows,
    runs,
    notOk: missing,
    w1SitesBeforeKill: sitesDone(workers[0]),
    killedAtS: Number(killedAt.toFixed(1)),
    wallS: Number(producersS.toFixed(1)),
    secondProducer: /usp batch: .*/.exec(second.stderr())?.[0] ?? '',
    load: loadavg()[0],
  };
  console.log(JSON.stringify(result));
} finally {
  await farm.close();
  await Promise.all([redis.stop(), pg.stop()]);
  rmSync(work, { recursive: true, force: true });
}
const md = `${n} sites, ${truth.size} page URLs (generator's ground truth); three \`usp worker --out postgres://…\` (16 sites each, 2 per host, 60 s site deadline), w1 killed with -9 after ${result.w1SitesBeforeKill} sites (${result.killedAtS} s in), the same list enqueued again at once by a second producer; load average ${loadBefore.toFixed(1)} before, ${result.load.toFixed(1)} after.

| SELECT count(*) FROM page_rows | count(DISTINCT url) | ground truth | site rows | runs | sites not ok/unreachable | wall (both producers done) |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| ${result.pageRows} | ${result.distinct} | ${result.truth} | ${result.siteRows} | ${result.runs} | ${result.notOk} | ${result.wallS} s |

Second producer: \`${result.secondProducer}\`. ${result.pageRows === result.truth && result.distinct === result.truth && result.siteRows === n ? 'PASS: every page exactly once.' : 'FAIL: not every page exactly once.'}
`;
writeFileSync(values.md, md);
console.log(md);
