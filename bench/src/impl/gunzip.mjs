// Informational floor below sax: fetch (or read) and gunzip only, nothing tokenised.
import { Readable } from 'node:stream';
import { gunzipStream, httpGet, isGzip } from './common.mjs';

async function drain(source, gzipped) {
  let bytes = 0;
  for await (const chunk of gzipped ? gunzipStream(source) : source) bytes += chunk.length;
  return bytes;
}

export async function prepare(task) {
  if (task.mode === 'file') {
    return async () => ({
      urls: null,
      bytes: await drain(Readable.from(task.chunks), isGzip(task.chunks[0])),
    });
  }
  if (task.mode === 'http') {
    return async () => ({
      urls: null,
      bytes: await drain(await httpGet(task.url), task.url.endsWith('.gz')),
    });
  }
  return async () => {
    let bytes = 0;
    for (const p of task.documents) bytes += await drain(await httpGet(task.origin + p), p.endsWith('.gz'));
    return { urls: null, bytes };
  };
}
