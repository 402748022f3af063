import { readdirSync, readFileSync } from 'node:fs';

/** The fields of /proc/PID/stat after the command's name, or null once the process is gone. */
function statFields(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
  } catch {
    return null;
  }
}

/**
 * CPU seconds of a server so far: the parent's own and its reaped children's, and its live
 * children's (PostgreSQL runs a process a connection). After the name, [1] is the parent and
 * [11..14] utime, stime, cutime, cstime (fields 4 and 14-17 of proc(5)), in clock ticks (100 a second).
 */
export function processTreeCpuS(pid) {
  const main = statFields(pid) ?? [];
  let ticks = main[11] + main[12] + main[13] + main[14];
  for (const entry of readdirSync('/proc')) {
    const f = /^\d+$/.test(entry) ? statFields(entry) : null;
    if (f !== null && f[1] === pid) ticks += f[11] + f[12];
  }
  return ticks / 100;
}
