// The batch bench's site farm on its own, for measuring one `usp batch` process by hand (perf,
// strace, --trace-gc, --cpu-prof) without the farm's own work in the same process: serves the
// farm's sites (seed 17, as src/batch.mjs) until it is stopped, and writes their homepages to FILE.
//   node src/farm-serve.mjs FILE [--sites N] [--big N]
//   node packages/usp/dist/cli.js batch --out DIR --state STATE --sites 16 --per-host 2 \
//     --site-deadline 60s --allow-private-networks --timeout 10s --retries 2 FILE
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startSiteFarm } from '@usp-ts/test-server';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    sites: { type: 'string', default: '1000' },
    big: { type: 'string', default: '3' },
  },
});
const file = positionals[0];
if (file === undefined) throw new Error('usage: node src/farm-serve.mjs FILE [--sites N] [--big N]');
const farm = await startSiteFarm({ sites: Number(values.sites), seed: 17, bigSites: Number(values.big) });
writeFileSync(file, farm.sitesFile());
console.log(
  `${farm.sites.length} sites, ${farm.allPages().size} page URLs; homepages in ${file}; stop with Ctrl-C`,
);
const stop = async () => {
  await farm.close();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
