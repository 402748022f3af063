import { type AddressInfo, createServer, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';

/**
 * How a closing server frames its answers; each closes the connection after the body:
 * - `connection-close`: HTTP/1.1 with `Content-Length` and `Connection: close`;
 * - `http1.0`: HTTP/1.0 with `Content-Length` (as `python3 -m http.server`);
 * - `http1.0-eof`: HTTP/1.0 without a length, the body ending with the connection.
 */
export type ClosingMode = 'connection-close' | 'http1.0' | 'http1.0-eof';

export interface ClosingFile {
  readonly body: Uint8Array;
  readonly contentType: string;
  /** `Content-Encoding`, when the body carries one. */
  readonly contentEncoding?: string;
  /** Announces this many bytes more than the body has, then closes: a truncated answer. */
  readonly shortBy?: number;
}

export interface ClosingServer {
  /** `http://127.0.0.1:PORT` (no trailing slash). */
  readonly origin: string;
  /** Requests received. */
  readonly requests: () => number;
  close(): Promise<void>;
}

/**
 * A server on 127.0.0.1 that answers each request and then closes the connection (FIN), written
 * on `net` so the framing is exactly the mode's. Unknown paths answer 404.
 */
export async function startClosingServer(
  mode: ClosingMode,
  files: Record<string, ClosingFile>,
): Promise<ClosingServer> {
  const sockets = new Set<Socket>();
  let requests = 0;
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let head = '';
    const onData = (d: Buffer): void => {
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      requests++;
      const path = head.split(' ')[1] ?? '/';
      const file = files[path];
      const body = file === undefined ? Buffer.from('not found') : Buffer.from(file.body);
      const lines = [
        `${mode === 'connection-close' ? 'HTTP/1.1' : 'HTTP/1.0'} ${file === undefined ? '404 Not Found' : '200 OK'}`,
        `Content-Type: ${file?.contentType ?? 'text/plain'}`,
      ];
      if (file?.contentEncoding !== undefined) lines.push(`Content-Encoding: ${file.contentEncoding}`);
      if (mode !== 'http1.0-eof') lines.push(`Content-Length: ${body.length + (file?.shortBy ?? 0)}`);
      if (mode === 'connection-close') lines.push('Connection: close');
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      socket.end(body);
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A urlset of `count` sequential pages under `origin`, each with lastmod, changefreq and
 * priority, gzipped: it compresses about 60 times, as real sitemaps do (50,000 pages: 8.5 MB of
 * XML in ~140 KB), so a reader that decompresses it is far slower than the wire.
 */
export function compressibleSitemapGz(origin: string, count: number): { xml: Buffer; gz: Buffer } {
  const parts = [
    '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n',
  ];
  for (let i = 0; i < count; i++) {
    parts.push(
      `<url><loc>${origin}/products/item-${i}.html</loc><lastmod>2024-05-1${i % 3}T10:00:00+00:00</lastmod><changefreq>weekly</changefreq><priority>0.8</priority></url>\n`,
    );
  }
  parts.push('</urlset>\n');
  const xml = Buffer.from(parts.join(''));
  return { xml, gz: gzipSync(xml) };
}
