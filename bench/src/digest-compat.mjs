// A state saved by an older build read by a newer one (page digest layouts, issue 37): OLD's
// `usp batch` walks the site farm fresh, then each round changes 10 % of the urlsets and removes
// 5 % of the pages, and runs OLD on one copy of that state and NEW on another. The page rows of
// the two must be the same, line for line (sorted): the first round reads OLD's digests with NEW's
// code, the later ones NEW's own. OLD and NEW are built checkouts (their packages/usp/dist/cli.js).
// Usage: node src/digest-compat.mjs OLD NEW [SITES=300] [ROUNDS=3]
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSiteFarm } from '@usp-ts/test-server';

const [OLD, NEW, SITES = '300', ROUNDS = '3'] = process.argv.slice(2);
if (OLD === undefined || NEW === undefined)
  throw new Error('usage: digest-compat.mjs OLD NEW [SITES] [ROUNDS]');
const farm = await startSiteFarm({ sites: Number(SITES), seed: 17, bigSites: 1 });
const work = mkdtempSync(join(tmpdir(), 'usp-digest-compat-'));
const sites = join(work, 'sites.txt');
writeFileSync(sites, farm.sitesFile());

/** One `usp batch` of `root` into `out` with `state`: its page lines sorted, and counts by change. */
async function run(root, out, state) {
  const args = ['batch', '--out', out, '--state', state, '--sites', '16', '--per-host', '2'];
  args.push('--site-deadline', '60s', '--allow-private-networks', '--timeout', '3s', '--retries', '1', sites);
  // Not spawnSync: the farm answers from this process.
  const child = spawn(process.execPath, [join(root, 'packages/usp/dist/cli.js'), ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const status = await new Promise((resolve) => child.on('exit', resolve));
  if (status !== 0 && status !== 1) throw new Error(`${root}: usp batch exited ${status}`);
  const lines = readFileSync(join(out, 'pages.ndjson'), 'utf8').split('\n').filter(Boolean);
  const by = {};
  for (const l of lines) {
    const c = JSON.parse(l).change;
    by[c] = (by[c] ?? 0) + 1;
  }
  return { sorted: lines.sort(), by };
}

const first = join(work, 'first.sqlite');
console.log('fresh (old):', (await run(OLD, join(work, 'fresh'), first)).by);
const states = { old: join(work, 'old.sqlite'), new: join(work, 'new.sqlite') };
copyFileSync(first, states.old);
copyFileSync(first, states.new);
let same = true;
for (let k = 0; k < Number(ROUNDS); k++) {
  farm.change(0.1, 23 + 2 * k);
  farm.remove(0.05, 29 + 2 * k);
  const a = await run(OLD, join(work, `old${k}`), states.old);
  const b = await run(NEW, join(work, `new${k}`), states.new);
  const equal = a.sorted.length === b.sorted.length && a.sorted.every((l, i) => l === b.sorted[i]);
  console.log(`round ${k + 1}: old`, a.by, 'new', b.by, equal ? 'the same rows' : 'DIFFERENT rows');
  same &&= equal;
}
await farm.close();
rmSync(work, { recursive: true, force: true });
console.log(same ? 'all rounds: the same rows' : 'rows differ');
process.exitCode = same ? 0 : 1;
