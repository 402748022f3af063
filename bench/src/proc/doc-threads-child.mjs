// One run of bench/src/doc-threads.mjs: `node doc-threads-child.mjs ROOT FILE ours|sax`. Loads the
// build (or sax) and the bytes first, then parses once and prints the parse's CPU ms by thread.
import { readdirSync, readFileSync } from 'node:fs';

const [root, file, impl] = process.argv.slice(2);

function threadCpuNs() {
  const byTask = new Map();
  for (const t of readdirSync('/proc/self/task')) {
    try {
      byTask.set(t, Number(readFileSync(`/proc/self/task/${t}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return byTask;
}

const buf = readFileSync(file);
const chunks = [];
for (let i = 0; i < buf.length; i += 65536) chunks.push(buf.subarray(i, i + 65536));
async function* body() {
  for (const c of chunks) yield c;
}

let parse;
if (impl === 'sax') {
  const sax = (await import(`${root}/bench/node_modules/sax/lib/sax.js`)).default;
  const nop = () => {};
  parse = async () => {
    const parser = sax.parser(true, { position: false, strictEntities: true });
    parser.onopentag = nop;
    parser.onclosetag = nop;
    parser.ontext = nop;
    parser.oncdata = nop;
    const decoder = new TextDecoder();
    for await (const c of body()) parser.write(decoder.decode(c, { stream: true }));
    parser.write(decoder.decode());
    parser.close();
  };
} else {
  const usp = await import(`${root}/packages/usp/dist/index.js`);
  const pageStore = usp.countingPageStore();
  parse = () => usp.parseSitemapDocument(body(), { url: 'http://bench.invalid/doc.xml', pageStore });
}

const before = threadCpuNs();
const t0 = performance.now();
await parse();
const wall = performance.now() - t0;
const after = threadCpuNs();
let main = 0;
let other = 0;
for (const [t, ns] of after) {
  const ms = (ns - (before.get(t) ?? 0)) / 1e6;
  if (t === String(process.pid)) main += ms;
  else other += ms;
}
console.log(JSON.stringify({ main, other, wall }));
