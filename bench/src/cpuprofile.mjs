// Summarises a V8 .cpuprofile: self time per function (with file and line), heaviest first.
import { readFileSync } from 'node:fs';

export function summariseProfile(file, top = 25) {
  const prof = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = prof.timeDeltas;
  for (let i = 0; i < prof.samples.length; i++) {
    const id = prof.samples[i];
    self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0));
  }
  const byFn = new Map();
  let total = 0;
  for (const [id, us] of self) {
    const n = byId.get(id);
    const cf = n.callFrame;
    const where = cf.url
      ? `${cf.url.replace(/^file:\/\//, '').replace(/.*\/(packages|node_modules)\//, '$1/')}:${cf.lineNumber + 1}`
      : '';
    const key = `${cf.functionName || '(anonymous)'} ${where}`.trim();
    byFn.set(key, (byFn.get(key) ?? 0) + us);
    total += us;
  }
  const rows = [...byFn.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  return {
    totalMs: total / 1000,
    rows: rows.map(([fn, us]) => ({ fn, ms: us / 1000, pct: (100 * us) / total })),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { totalMs, rows } = summariseProfile(process.argv[2], Number(process.argv[3] ?? 25));
  console.log(`total ${totalMs.toFixed(0)} ms sampled`);
  for (const r of rows)
    console.log(`${r.ms.toFixed(0).padStart(7)} ms ${r.pct.toFixed(1).padStart(5)}%  ${r.fn}`);
}
