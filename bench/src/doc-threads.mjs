// Issue 37: where a one-document run's CPU goes, thread by thread. Each run is a fresh process
// (`proc/doc-threads-child.mjs`) that loads a build and the document's bytes, then parses the
// document once, in 64 KiB chunks, as the bench's `*-doc` rows do; it reads every thread's CPU
// time (/proc/self/task/*/schedstat) before and after the parse: "main" is the JavaScript thread,
// "other" V8's helper threads (the optimising compiler's jobs, parallel and concurrent GC). With
// `--no-opt` "other" falls to ~2 ms on the image sitemap, so "other" is mostly TurboFan compiles.
// Configs run alternated, order reversed every other round; it prints medians, and each config's
// median per-round ratio of total CPU against the last config (range). Linux only.
//   node bench/src/doc-threads.mjs [--rounds 11] [--file image.xml] \
//     'ours=ROOT' 'n200=ROOT:ours:--max-inlined-bytecode-size=200' 'floor=ROOT:sax'
// ROOT is a built checkout; the second field `ours` (default) or `sax` (the bench's floor: sax,
// strict, empty handlers, over a streaming TextDecoder); the rest are node flags (diagnostics).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureData } from './generate.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const benchDir = path.resolve(here, '..');
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '11' },
    file: { type: 'string', default: 'image.xml' },
  },
});
const dataDir = path.join(benchDir, '.data');
await ensureData(dataDir, 'full', (m) => console.error(m));
const file = values.file.includes('/')
  ? path.resolve(values.file)
  : path.join(dataDir, 'full', 'single', values.file);
const child = path.join(here, 'proc', 'doc-threads-child.mjs');

const configs = positionals.map((spec) => {
  const eq = spec.indexOf('=');
  const [root, impl = 'ours', ...flags] = spec.slice(eq + 1).split(':');
  return { label: spec.slice(0, eq), root: path.resolve(root), impl, flags, runs: [] };
});
if (configs.length === 0) throw new Error('give at least one config: label=ROOT[:ours|sax[:node flags]]');

for (let r = 0; r < Number(values.rounds); r++) {
  for (const c of r % 2 === 0 ? configs : [...configs].reverse()) {
    const out = execFileSync(process.execPath, [...c.flags, child, c.root, file, c.impl], {
      encoding: 'utf8',
    });
    c.runs.push(JSON.parse(out.trim().split('\n').pop()));
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const ref = configs[configs.length - 1];
console.log(`${path.basename(file)}, ${values.rounds} rounds; CPU ms of the parse, medians`);
for (const c of configs) {
  const total = c.runs.map((x) => x.main + x.other);
  const ratios = c.runs.map((x, i) => (ref.runs[i].main + ref.runs[i].other) / (x.main + x.other));
  const stat = (k) => median(c.runs.map((x) => x[k])).toFixed(1);
  console.log(
    `${c.label.padEnd(12)} main ${stat('main')}  other ${stat('other')}  total ${median(total).toFixed(1)}  wall ${stat('wall')}` +
      `  ${ref.label} ÷ this ${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})`,
  );
}
