// `usp ls` on one of the bench's sites (default the 1M-URL site), several builds or Node binaries
// alternated (order reversed every other round): peak RSS of the process (GNU time), CPU, wall.
// Each config is `label=NODE[ flags]:CLI[:ARGS[:ENV=V,ENV=V]]`; `--memory DIR` adds the
// preload proc/memory-preload.mjs to every run and writes its report to DIR/<label>.<round>.
//   node bench/src/ls-rss.mjs [--rounds 3] [--site big] [--memory DIR] 'after=node:packages/usp/dist/cli.js' \
//     'before=node:/tmp/main/packages/usp/dist/cli.js' 'n24=/path/to/node24:packages/usp/dist/cli.js'
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureData } from './generate.mjs';
import { startSiteServer } from './server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const benchDir = path.resolve(here, '..');
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '3' },
    site: { type: 'string', default: 'big' },
    memory: { type: 'string' },
  },
});
const dataDir = path.join(benchDir, '.data');
const manifest = await ensureData(dataDir, 'full', (m) => console.error(m));
const server = await startSiteServer(path.join(dataDir, 'full'), manifest.sites[values.site].routes);
const preload = path.join(here, 'proc', 'memory-preload.mjs');

const configs = positionals.map((spec) => {
  const eq = spec.indexOf('=');
  const [node, cli, args, env] = spec.slice(eq + 1).split(':');
  return {
    label: spec.slice(0, eq),
    node: node.split(' '),
    cli,
    args: args ? args.split(' ') : [],
    env: Object.fromEntries(
      (env ?? '')
        .split(',')
        .filter(Boolean)
        .map((kv) => kv.split('=')),
    ),
  };
});

function run(c, round) {
  const memory = values.memory === undefined ? [] : ['--import', preload];
  const env = { ...process.env, ...c.env };
  if (values.memory !== undefined) env.USP_MEMORY_OUT = path.join(values.memory, `${c.label}.${round}`);
  const argv = [
    '-f',
    '%M %U %S %e',
    ...c.node,
    ...memory,
    c.cli,
    'ls',
    `${server.origin}/`,
    '--no-progress',
    ...c.args,
  ];
  return new Promise((resolve) => {
    const p = spawn('/usr/bin/time', argv, { stdio: ['ignore', 'ignore', 'pipe'], env });
    let err = '';
    p.stderr.on('data', (d) => {
      err += d;
    });
    p.on('close', (code) => {
      const [rssKiB, user, sys, wall] = err.trim().split('\n').pop().split(' ').map(Number);
      resolve({
        code,
        rssMiB: rssKiB / 1024,
        cpu: user + sys,
        wall,
        err: code === 0 ? '' : err.slice(0, 300),
      });
    });
  });
}

const results = Object.fromEntries(configs.map((c) => [c.label, []]));
for (let round = 0; round < Number(values.rounds); round++) {
  for (const c of round % 2 === 0 ? configs : [...configs].reverse()) {
    const r = await run(c, round);
    results[c.label].push(r);
    console.log(
      `round ${round} ${c.label}: ${r.rssMiB.toFixed(1)} MiB, ${r.cpu.toFixed(2)} s CPU, ${r.wall.toFixed(2)} s wall${r.code === 0 ? '' : ` (exit ${r.code}: ${r.err})`}`,
    );
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
for (const c of configs) {
  const rs = results[c.label];
  console.log(
    `${c.label}: peak RSS ${rs.map((r) => r.rssMiB.toFixed(1)).join(', ')} MiB; CPU median ${median(rs.map((r) => r.cpu)).toFixed(2)} s`,
  );
}
await server.close();
