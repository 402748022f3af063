// Helpers shared by the runners: the document bytes as 64 KiB chunks, HTTP bodies, gunzip.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createGunzip } from 'node:zlib';

export const CHUNK_BYTES = 64 * 1024;

/** The file's bytes as network-sized chunks, read before the clock starts. */
export function fileChunks(file) {
  const buf = readFileSync(file);
  const chunks = [];
  for (let i = 0; i < buf.length; i += CHUNK_BYTES) chunks.push(buf.subarray(i, i + CHUNK_BYTES));
  return chunks;
}

export async function* iterate(chunks) {
  for (const c of chunks) yield c;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/** GET over keep-alive; resolves to the response stream (rejects on non-200). */
export function httpGet(url) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`${url}: HTTP ${res.statusCode}`));
        return;
      }
      resolve(res);
    });
    req.on('error', reject);
  });
}

export async function httpText(url) {
  const res = await httpGet(url);
  let s = '';
  res.setEncoding('utf8');
  for await (const c of res) s += c;
  return s;
}

/** Decompresses with 64 KiB output chunks (Node's 16 KiB default is several times slower). */
export function gunzipStream(source) {
  const gz = createGunzip({ chunkSize: CHUNK_BYTES });
  source.pipe(gz);
  source.on('error', (e) => gz.destroy(e));
  return gz;
}

export function isGzip(firstChunk) {
  return firstChunk.length >= 2 && firstChunk[0] === 0x1f && firstChunk[1] === 0x8b;
}

export function robotsSitemaps(text) {
  const out = [];
  for (const line of text.split('\n')) {
    const m = /^\s*sitemap\s*:\s*(\S+)/i.exec(line);
    if (m) out.push(m[1]);
  }
  return out;
}
