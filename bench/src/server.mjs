// Static server on 127.0.0.1 for one generated site: keep-alive, files streamed from disk in
// large reads, gzip files served as application/gzip bodies (not Content-Encoding), as many
// real sites serve their .xml.gz sitemaps.
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

function contentType(p) {
  if (p.endsWith('.gz')) return 'application/gzip';
  if (p.endsWith('.xml')) return 'application/xml';
  return 'text/plain; charset=utf-8';
}

/**
 * Starts a server for `routes` (request path -> { file, template }); files are relative to `dir`.
 * Template files have `{{ORIGIN}}` replaced by the server's own origin (and are gzipped when the
 * path ends in .gz). Returns `{ origin, close() }`.
 */
export async function startSiteServer(dir, routes) {
  const table = new Map();
  const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    const route = table.get((req.url ?? '/').split('?')[0]);
    if (route === undefined) {
      res.writeHead(404, { 'Content-Type': 'text/html', 'Content-Length': '22' });
      res.end('<h1>404 Not Found</h1>');
      return;
    }
    if (route.body !== undefined) {
      res.writeHead(200, { 'Content-Type': route.type, 'Content-Length': String(route.body.length) });
      res.end(route.body);
      return;
    }
    res.writeHead(200, { 'Content-Type': route.type, 'Content-Length': String(route.size) });
    const stream = createReadStream(route.file, { highWaterMark: 256 * 1024 });
    stream.on('error', () => res.destroy());
    res.on('close', () => stream.destroy());
    stream.pipe(res);
  });
  const sockets = new Set();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  for (const [p, r] of Object.entries(routes)) {
    const file = path.join(dir, r.file);
    if (r.template) {
      let body = Buffer.from(readFileSync(file, 'utf8').replaceAll('{{ORIGIN}}', origin));
      if (p.endsWith('.gz')) body = gzipSync(body);
      table.set(p, { type: contentType(p), body });
    } else {
      table.set(p, { type: contentType(p), file, size: statSync(file).size });
    }
  }
  return {
    origin,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
