// Preloaded (`--import`) into a `usp ls` process by thread-cpu.mjs: at exit, appends one JSON line
// to THREAD_CPU_OUT with the CPU seconds of the main thread, of the parse workers (their threads
// are gone by then: the process's total less every thread still there) and of the rest (V8's
// compiler and GC helpers, libuv's pool), and the peak RSS. Linux only (/proc).
//
// Also, for each of those groups, user and system time apart, minor page faults and context
// switches (voluntary: the thread slept, waiting for something; involuntary: the scheduler took
// the core away). The process's own counters include the threads that ended, so the workers'
// share is the process's less every thread still there. V8's platform threads and libuv's pool
// are one group: both are started before this module runs, and Linux names them all `node`.
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const out = process.env.THREAD_CPU_OUT;
const ticks = 100;

/** utime, stime (s), minflt, majflt, voluntary and involuntary switches of one thread, or null. */
function threadStats(tid) {
  let stat;
  let status;
  try {
    stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    status = readFileSync(`/proc/self/task/${tid}/status`, 'utf8');
  } catch {
    return null;
  }
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const field = (name) => Number(new RegExp(`^${name}:\\s*(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return {
    user: Number(f[11]) / ticks,
    sys: Number(f[12]) / ticks,
    minflt: Number(f[7]),
    majflt: Number(f[9]),
    vcsw: field('voluntary_ctxt_switches'),
    ivcsw: field('nonvoluntary_ctxt_switches'),
  };
}

const zero = () => ({ user: 0, sys: 0, minflt: 0, majflt: 0, vcsw: 0, ivcsw: 0 });
const add = (a, b) => {
  for (const k of Object.keys(a)) a[k] += b[k];
  return a;
};
const round = (g) => {
  const r = {};
  for (const [k, v] of Object.entries(g)) r[k] = k === 'user' || k === 'sys' ? Math.round(v * 100) / 100 : v;
  return r;
};

if (isMainThread && out !== undefined) {
  process.on('exit', () => {
    let main = 0;
    let others = 0;
    const groups = { main: zero(), worker: zero(), helpers: zero() };
    const live = zero();
    for (const tid of readdirSync('/proc/self/task')) {
      const t = threadStats(tid);
      if (t === null) continue;
      const s = t.user + t.sys;
      add(live, t);
      if (tid === String(process.pid)) {
        main += s;
        add(groups.main, t);
      } else {
        others += s;
        add(groups.helpers, t);
      }
    }
    const ru = process.resourceUsage();
    const total = (ru.userCPUTime + ru.systemCPUTime) / 1e6;
    const proc = {
      user: ru.userCPUTime / 1e6,
      sys: ru.systemCPUTime / 1e6,
      minflt: ru.minorPageFault,
      majflt: ru.majorPageFault,
      vcsw: ru.voluntaryContextSwitches,
      ivcsw: ru.involuntaryContextSwitches,
    };
    for (const k of Object.keys(proc)) groups.worker[k] = Math.max(0, proc[k] - live[k]);
    const line = {
      main,
      worker: Math.max(0, total - main - others),
      other: others,
      total,
      rssMiB: ru.maxRSS / 1024,
      threads: Object.fromEntries(Object.entries(groups).map(([k, g]) => [k, round(g)])),
      proc: round(proc),
    };
    appendFileSync(out, `${JSON.stringify(line)}\n`);
  });
}
