import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Often enough that the bound is passed by at most ~1 MiB (buffers come at ~10 MiB/s). */
const CHECK_MS = 100;

let installed = false;

/**
 * Runs a full garbage collection whenever this process's external memory (Buffers and other
 * ArrayBuffers: HTTP chunks, gunzip output) has grown by `stepMb` MiB since its lowest point or
 * the last collection. A Buffer's memory goes back only when a full collection finds its wrapper
 * dead, and the wrappers of chunks that waited across two scavenges are promoted; V8 starts a full
 * collection for external memory only 64 MiB above its last level. In a walk's first seconds, while
 * the code is not yet optimised, ~20 MiB of spent chunks piled up so, and the allocator kept the
 * RSS after they were freed (one-thread `usp ls` on the 1M-URL site: peak 101-104 MiB; with this
 * at 8 MiB, 90 MiB for 3 collections, ~40 ms of CPU). The collector is reached through
 * `--expose-gc` in a context of its own, the flag set back at once: nothing is added to the
 * program's globals. With `aboveRssMb`, only while the process's RSS is above it: a collection at
 * every step costs a process that makes many Buffers (a batch's fresh run: +20-50 % CPU at 8 MiB),
 * and below the bound nothing needs it. For the CLI's own process, never the library.
 */
export function collectOnExternalGrowth(stepMb: number, checkMs = CHECK_MS, aboveRssMb = 0): void {
  if (installed) return;
  installed = true;
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  // Back to the default at once: V8 checks a hash of the non-default flags before it uses cached
  // code (Node's own modules, in a worker started later).
  setFlagsFromString('--no-expose-gc');
  const step = stepMb * 1024 * 1024;
  const aboveRss = aboveRssMb * 1024 * 1024;
  let low = getHeapStatistics().external_memory;
  setInterval(() => {
    const external = getHeapStatistics().external_memory;
    if (external < low) low = external;
    if (external - low <= step) return;
    if (aboveRssMb > 0 && process.memoryUsage.rss() < aboveRss) return;
    gc();
    low = getHeapStatistics().external_memory;
  }, checkMs).unref();
}
