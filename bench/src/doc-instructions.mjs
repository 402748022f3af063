// One document parsed N times by a built checkout, for instruction counts under callgrind
// (issue 37): `valgrind --tool=callgrind node bench/src/doc-instructions.mjs ROOT FILE N [sax]`;
// a URL's instructions = (count at N = 2 - count at N = 1) / URLs, warm. ROOT is a built
// checkout (this one, or a copy of main for "before"); `sax` reads with sax alone.
import { readFileSync } from 'node:fs';

const [root, file, times, tokenizer] = process.argv.slice(2);
const usp = await import(`${root}/packages/usp/dist/index.js`);
const buf = readFileSync(file);
const chunks = [];
for (let i = 0; i < buf.length; i += 65536) chunks.push(buf.subarray(i, i + 65536));
async function* body() {
  for (const c of chunks) yield c;
}
let urls = 0;
for (let k = 0; k < Number(times); k++) {
  const options = { url: 'http://bench.invalid/x.xml', pageStore: usp.countingPageStore() };
  if (tokenizer) options.xmlTokenizer = tokenizer;
  const parsed = await usp.parseSitemapDocument(body(), options);
  urls += parsed.sitemap.pageCount ?? 0;
}
console.error(`urls ${urls}`);
