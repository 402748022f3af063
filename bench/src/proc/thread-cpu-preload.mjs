// Preloaded (`--import`) into a `usp ls` process by thread-cpu.mjs: at exit, appends one JSON line
// to THREAD_CPU_OUT with the CPU seconds of the main thread, of the parse workers (their threads
// are gone by then: the process's total less every thread still there) and of the rest (V8's
// compiler and GC helpers, libuv's pool), and the peak RSS. Linux only (/proc).
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const out = process.env.THREAD_CPU_OUT;
if (isMainThread && out !== undefined) {
  process.on('exit', () => {
    const ticks = 100;
    let main = 0;
    let others = 0;
    for (const tid of readdirSync('/proc/self/task')) {
      let stat;
      try {
        stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      } catch {
        continue;
      }
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const s = (Number(f[11]) + Number(f[12])) / ticks;
      if (tid === String(process.pid)) main += s;
      else others += s;
    }
    const ru = process.resourceUsage();
    const total = (ru.userCPUTime + ru.systemCPUTime) / 1e6;
    const line = {
      main,
      worker: Math.max(0, total - main - others),
      other: others,
      total,
      rssMiB: ru.maxRSS / 1024,
    };
    appendFileSync(out, `${JSON.stringify(line)}\n`);
  });
}
