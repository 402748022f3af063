// One batch run into one store, in-process through the library (what `usp batch` does with
// `--out`): the child process the stores bench times. Usage:
//   node src/store-run.mjs ndjson DIR STATE.sqlite SITES_FILE
//   node src/store-run.mjs sqlite FILE.sqlite - SITES_FILE
//   node src/store-run.mjs postgres URL RUN_ID SITES_FILE
// Prints one JSON line: { sites, pages } as the runner counted them; on stderr, a line as each site
// ends (`usp: SITE: STATUS`).
import { readFileSync } from 'node:fs';
import { writeHeapSnapshot } from 'node:v8';
import { batchWalk, openNdjsonSink } from '@usp-ts/batch';
import { openSqliteStore, sqliteStateStore } from '@usp-ts/state-sqlite';
import { openPostgresStore } from '@usp-ts/store-postgres';
import { createDefaultRegistry, createWebClient } from 'usp';

const [kind, target, extra, sitesFile] = process.argv.slice(2);
// USP_BENCH_MEMORY=1: peak of each part of the memory (sampled every 50 ms) on stderr at the end.
let snapped = false;
const peaks = { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 };
const sampler =
  process.env.USP_BENCH_MEMORY === '1'
    ? setInterval(() => {
        const m = process.memoryUsage();
        for (const k of Object.keys(peaks)) peaks[k] = Math.max(peaks[k], m[k]);
        // USP_BENCH_HEAPSNAP=FILE:MIB: one heap snapshot when the RSS first passes MIB.
        const snap = process.env.USP_BENCH_HEAPSNAP?.split(':');
        if (snap !== undefined && !snapped && m.rss > Number(snap[1]) * 1048576) {
          snapped = true;
          writeHeapSnapshot(snap[0]);
        }
      }, 50)
    : null;
const SITES = 16;
const PER_HOST = 2;
const webClient = createWebClient({
  allowPrivateNetworks: true,
  requestTimeoutMs: 10_000,
  retries: 2,
  maxConcurrentRequests: SITES * PER_HOST,
  maxConnectionsPerHost: PER_HOST,
  keepAliveTimeoutMs: 1_000,
});
let sink;
let state;
let close;
if (kind === 'ndjson') {
  state = sqliteStateStore(extra);
  sink = await openNdjsonSink({ dir: target, state });
  close = async () => {
    await sink.close();
    await state.close();
  };
} else if (kind === 'sqlite') {
  const store = openSqliteStore(target);
  ({ sink, state } = store);
  close = () => store.close();
} else if (kind === 'postgres') {
  const store = await openPostgresStore({ url: target, runId: extra });
  ({ sink, state } = store);
  close = () => store.close();
} else throw new Error(`unknown store ${kind}`);
// An array, not a readline interface: lines a readline emits before its iterator is first read
// are lost, and the runner reads its input only after asking the state for its unreachable sites
// (a query, on PostgreSQL).
const lines = readFileSync(sitesFile, 'utf8').split('\n');
let sites = 0;
let pages = 0;
for await (const r of batchWalk(lines, {
  webClient,
  registry: createDefaultRegistry(),
  sink,
  state,
  sites: SITES,
  perHost: PER_HOST,
  siteDeadlineMs: 60_000,
})) {
  sites++;
  pages += r.pages;
  // As `usp batch -v` says it: the bench times the run to the last site but the hung and refused ones.
  process.stderr.write(`usp: ${r.site}: ${r.status}\n`);
}
await Promise.all([close(), webClient.close()]);
if (sampler !== null) {
  clearInterval(sampler);
  const mib = Object.fromEntries(Object.entries(peaks).map(([k, v]) => [k, Math.round(v / 1048576)]));
  process.stderr.write(`memory peaks MiB ${JSON.stringify(mib)}\n`);
}
process.stdout.write(`${JSON.stringify({ sites, pages })}\n`);
