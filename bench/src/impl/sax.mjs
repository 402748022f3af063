// The floor: sax in strict mode with our engine's options (no position tracking, strict
// entities, no xmlns) tokenising the same (gunzipped, decoded) bytes the libraries read, with
// empty handlers for the events any sitemap reader listens to (open tag, close tag, text,
// CDATA), as issue 3 defines it. `task.handlers === 'none'` (the `sax-bare` row) sets no
// handler at all: sax then skips every call, a stricter floor shown for information.
import { Readable } from 'node:stream';
import sax from 'sax';
import { gunzipStream, httpGet, isGzip } from './common.mjs';

const nop = () => {};

async function tokenise(source, gzipped, handlers) {
  const parser = sax.parser(true, { position: false, strictEntities: true });
  if (handlers !== 'none') {
    parser.onopentag = nop;
    parser.onclosetag = nop;
    parser.ontext = nop;
    parser.oncdata = nop;
  }
  const decoder = new TextDecoder();
  const stream = gzipped ? gunzipStream(source) : source;
  let bytes = 0;
  for await (const chunk of stream) {
    bytes += chunk.length;
    parser.write(decoder.decode(chunk, { stream: true }));
  }
  parser.write(decoder.decode());
  parser.close();
  return bytes;
}

export async function prepare(task) {
  if (task.mode === 'file') {
    return async () => {
      const bytes = await tokenise(Readable.from(task.chunks), isGzip(task.chunks[0]), task.handlers);
      return { urls: null, bytes };
    };
  }
  if (task.mode === 'http') {
    return async () => {
      const res = await httpGet(task.url);
      return { urls: null, bytes: await tokenise(res, task.url.endsWith('.gz'), task.handlers) };
    };
  }
  // A site: every document the site has (known from the manifest), one after the other.
  return async () => {
    let bytes = 0;
    for (const p of task.documents) {
      const res = await httpGet(task.origin + p);
      if (p.endsWith('.txt')) {
        // robots.txt is not XML: read it, nothing to tokenise.
        for await (const chunk of res) bytes += chunk.length;
      } else {
        bytes += await tokenise(res, p.endsWith('.gz'), task.handlers);
      }
    }
    return { urls: null, bytes };
  };
}
