import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';

export interface TestProxy {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** The `host:port` of every CONNECT received, in order. */
  readonly targets: string[];
  /** The `Proxy-Authorization` header of every CONNECT (`null` when absent), in order. */
  readonly authorizations: (string | null)[];
  close(): Promise<void>;
}

/**
 * A CONNECT (tunnelling) proxy on 127.0.0.1 that records what it is asked for. It only ever
 * connects to loopback: any other target is refused with 403, so a test never reaches out.
 */
export async function startTestProxy(): Promise<TestProxy> {
  const targets: string[] = [];
  const authorizations: (string | null)[] = [];
  const sockets = new Set<Socket>();
  const proxy = createServer((_req, res) => {
    res.writeHead(405);
    res.end('this proxy only tunnels (CONNECT)');
  });
  proxy.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    targets.push(req.url ?? '');
    authorizations.push(req.headers['proxy-authorization'] ?? null);
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    const [host, port] = (req.url ?? '').split(':');
    if (host !== '127.0.0.1') {
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    targets,
    authorizations,
    close() {
      for (const s of sockets) s.destroy();
      proxy.closeAllConnections();
      return new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
