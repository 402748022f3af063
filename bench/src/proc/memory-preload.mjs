// Preload (`node --import`) for bench/src/ls-rss.mjs: samples memory every 10 ms in every thread
// and appends to $USP_MEMORY_OUT, at exit (main thread) or every 200 ms (workers, which may be
// terminated): each V8 heap's maxima, and in the main thread the process's RSS by mapping kind
// (`node-binary`, `[anon]`: V8 heaps and thread arenas, `[heap]`: the main thread's malloc arena)
// at its peak, plus a trace every 250 ms. Linux only (/proc/self/smaps).
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import v8 from 'node:v8';
import { isMainThread, threadId } from 'node:worker_threads';

const out = process.env.USP_MEMORY_OUT;
const who = isMainThread ? 'main' : `worker${threadId}`;
const mib = (x) => (x / 1048576).toFixed(1);
const fields = (o) =>
  Object.entries(o)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${k}=${mib(v)}`)
    .join(' ');

function smaps() {
  const by = {};
  let name = '';
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      name = head[1] || '[anon]';
      if (name === process.execPath) name = 'node-binary';
      else if (name.startsWith('/')) name = 'other-files';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) by[name] = (by[name] ?? 0) + Number(rss[1]) * 1024;
  }
  return by;
}

const t0 = Date.now();
const max = {};
const trace = [];
let peak = 0;
let atPeak = null;
let ticks = 0;
function sample() {
  const rss = process.memoryUsage.rss();
  const h = v8.getHeapStatistics();
  const row = { rss, heap: h.total_physical_size, external: h.external_memory ?? 0 };
  for (const s of v8.getHeapSpaceStatistics()) row[s.space_name] = s.physical_space_size;
  for (const [k, v] of Object.entries(row)) if (!(max[k] >= v)) max[k] = v;
  if (!isMainThread) return;
  if (rss > peak + 512 * 1024) atPeak = { at: Date.now() - t0, ...smaps() };
  if (rss > peak) peak = rss;
  if (++ticks % 25 === 0) {
    const m = smaps();
    trace.push(
      `${((Date.now() - t0) / 1000).toFixed(1)}s rss ${mib(rss)} binary ${mib(m['node-binary'] ?? 0)} anon ${mib(m['[anon]'] ?? 0)} malloc ${mib(m['[heap]'] ?? 0)} v8 ${mib(h.total_physical_size)} external ${mib(row.external)}`,
    );
  }
}
setInterval(() => {
  sample();
  if (!isMainThread && ticks++ % 20 === 0) writeFileSync(`${out}.${who}`, `${who} max: ${fields(max)}\n`);
}, 10).unref();
process.on('exit', () => {
  if (!isMainThread) return;
  sample();
  const { at, ...kinds } = atPeak ?? { at: 0 };
  appendFileSync(
    out,
    `${who} max: ${fields(max)}\nat the peak (${(at / 1000).toFixed(2)} s): ${fields(kinds)}\n${trace.join('\n')}\n`,
  );
});
