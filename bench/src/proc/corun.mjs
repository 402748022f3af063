// The machine's co-running cost, for thread-cpu.mjs: `node corun.mjs FILE.xml.gz ROUNDS THREADS`
// parses one gzipped urlset with usp's parser ROUNDS times in each of THREADS worker threads at
// once (after one warm-up parse each) and prints the CPU seconds each thread spent per parse,
// read from /proc (Linux). The same work alone and two at a time: the difference is what two
// busy cores cost each other (shared caches, memory bandwidth, a host's sibling threads).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { gunzipSync } from 'node:zlib';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

function threadCpuS() {
  const stat = readFileSync('/proc/thread-self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

if (isMainThread) {
  const [file, rounds, threads] = process.argv.slice(2);
  const body = gunzipSync(readFileSync(file));
  const results = await Promise.all(
    Array.from({ length: Number(threads) }, () => {
      const w = new Worker(fileURLToPath(import.meta.url), { workerData: { body, rounds: Number(rounds) } });
      return new Promise((resolve, reject) => {
        w.once('message', resolve);
        w.once('error', reject);
      });
    }),
  );
  console.log(JSON.stringify(results));
} else {
  const { parseDocument } = await import(`${repo}packages/core/dist/index.js`);
  const { createDefaultRegistry } = await import(`${repo}packages/usp/dist/index.js`);
  const registry = createDefaultRegistry();
  const { body, rounds } = workerData;
  const once = async () => {
    let n = 0;
    await parseDocument({
      url: 'http://127.0.0.1/sitemap.xml',
      body,
      registry,
      onPages: (pages) => {
        n += pages.length;
      },
    });
    return n;
  };
  await once();
  const t0 = threadCpuS();
  let pages = 0;
  for (let r = 0; r < rounds; r++) pages += await once();
  parentPort.postMessage({ cpuSPerParse: (threadCpuS() - t0) / rounds, pages: pages / rounds });
}
