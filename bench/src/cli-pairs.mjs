// Fresh `usp batch` runs of several variants (a CLI and the node flags it is run with), alternated
// round by round, against a farm already serving (`node src/farm-serve.mjs SITES`): each run under
// GNU time (user + sys CPU, wall, peak RSS) with an empty state, as src/batch.mjs runs it. Reports
// each variant's CPU by round, its median and its per-round ratio to the first variant's.
//   node src/cli-pairs.mjs SITES ROUNDS VARIANTS.json [--log FILE]
// VARIANTS.json: [{ "name": "x4", "cli": "packages/usp/dist/cli.js", "args": ["--interrupt-budget=270336"] }, …]
// A V8 flag on the command line makes Node compile its built-in modules from source: give every
// variant one (the same start-up cost), and the CLI leaves a kind of flag it is given alone.
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { spawnTimed } from './timed.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { log: { type: 'string' } },
});
const [sites, roundsText, variantsFile] = positionals;
if (variantsFile === undefined)
  throw new Error('usage: node src/cli-pairs.mjs SITES ROUNDS VARIANTS.json [--log FILE]');
const variants = JSON.parse(readFileSync(variantsFile, 'utf8'));
const rounds = Number(roundsText);
const work = mkdtempSync(join(tmpdir(), 'usp-cli-pairs-'));
const load = () => loadavg()[0].toFixed(2);
const say = (line) => {
  console.log(line);
  if (values.log !== undefined) appendFileSync(values.log, `${line}\n`);
};
const median = (xs) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 === 1 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};

const runs = Object.fromEntries(variants.map((v) => [v.name, []]));
say(`# ${new Date().toISOString()} ${variantsFile}, load ${load()}`);
for (let r = 0; r < rounds; r++) {
  // Each round starts with another variant, and every other round goes backwards.
  const order = variants.map((_, i) => variants[(i + r) % variants.length]);
  if (r % 2 === 1) order.reverse();
  for (const v of order) {
    const dir = join(work, v.name);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const t = await spawnTimed(process.execPath, [
      ...v.args,
      v.cli,
      'batch',
      '-v',
      '--out',
      join(dir, 'out'),
      '--state',
      join(dir, 'state.sqlite'),
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
      sites,
    ]).done;
    if (t.code !== 0) throw new Error(`${v.name} exited ${t.code}: ${t.stderr.slice(-500)}`);
    runs[v.name].push(t);
    say(
      `round ${r} ${v.name}: CPU ${t.cpuS.toFixed(2)} s, wall ${t.wallS.toFixed(1)} s, peak RSS ${t.peakRssMiB.toFixed(1)} MiB, load ${load()}`,
    );
  }
}
const first = runs[variants[0].name];
for (const v of variants) {
  const cpu = runs[v.name].map((t) => t.cpuS);
  const ratios = cpu.map((c, i) => c / first[i].cpuS);
  const rss = runs[v.name].map((t) => t.peakRssMiB);
  say(
    `${v.name}: CPU ${cpu.map((c) => c.toFixed(2)).join(', ')} s (median ${median(cpu).toFixed(2)}), ÷ ${variants[0].name} ${ratios.map((x) => x.toFixed(2)).join(', ')} (median ${median(ratios).toFixed(3)}), peak RSS ${Math.min(...rss).toFixed(0)}-${Math.max(...rss).toFixed(0)} MiB`,
  );
}
say(`# end ${new Date().toISOString()}, load ${load()}`);
rmSync(work, { recursive: true, force: true });
