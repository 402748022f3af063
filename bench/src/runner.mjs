// One measured run in its own process: `node runner.mjs '<task json>'`. Libraries are loaded and
// inputs read before the clock starts; the run's wall time, CPU time (user + sys, all threads)
// and the process's peak RSS go to stdout as one `RESULT ` line.
import path from 'node:path';
import { fileChunks } from './impl/common.mjs';

const task = JSON.parse(process.argv[2]);

function report(obj) {
  process.stdout.write(`RESULT ${JSON.stringify(obj)}\n`);
}

async function main() {
  const impl = await import(`./impl/${task.impl}.mjs`);
  if (task.mode === 'file') task.chunks = fileChunks(path.join(task.dataDir, task.file));
  const run = await impl.prepare(task);
  if (run === null) {
    report({ ok: false, unsupported: true, error: `${task.impl} has no API for this input` });
    return;
  }
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const out = await run();
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const ru = process.resourceUsage();
  report({
    ok: true,
    urls: out.urls,
    bytes: out.bytes ?? null,
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    userMs: cpu.user / 1000,
    sysMs: cpu.system / 1000,
    maxRssKiB: ru.maxRSS,
    extra: out.extra ?? null,
  });
}

main().then(
  () => process.exit(0),
  (e) => {
    const msg =
      e?.code === 'ERR_MODULE_NOT_FOUND'
        ? `not built or not installed: ${e.message.split('\n')[0]}`
        : String(e?.stack ?? e);
    report({ ok: false, error: msg.split('\n').slice(0, 3).join(' | ') });
    process.exit(1);
  },
);
