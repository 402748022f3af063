import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A route answers a request; it may write the response in any way, including badly. */
export type Route = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export interface SimpleResponse {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export interface TestServer {
  /** `http://HOST:PORT` (no trailing slash). */
  readonly origin: string;
  readonly port: number;
  /** `METHOD path` of every request received, in order. */
  readonly requests: string[];
  /** Sockets currently open (to assert nothing leaks). */
  openSockets(): number;
  route(path: string, handler: Route | SimpleResponse): void;
  close(): Promise<void>;
}

export interface TestServerOptions {
  /**
   * The loopback address to listen on (default `127.0.0.1`). Any `127.x.y.z` works on Linux, so
   * tests can give each site its own host.
   */
  readonly host?: string;
  /** Default: a free port. */
  readonly port?: number;
}

/**
 * Starts a server on 127.0.0.1 (or `options.host`) with a random port. Unknown paths answer 404,
 * or go to the route named `*` when there is one.
 * `close()` destroys open sockets so a test never waits on a hanging route.
 */
export async function startTestServer(
  routes: Record<string, Route | SimpleResponse> = {},
  options: TestServerOptions = {},
): Promise<TestServer> {
  const host = options.host ?? '127.0.0.1';
  const table = new Map<string, Route>();
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const toRoute = (r: Route | SimpleResponse): Route =>
    typeof r === 'function'
      ? r
      : (_req, res) => {
          res.writeHead(r.status ?? 200, r.headers ?? {});
          res.end(r.body ?? '');
        };
  for (const [p, r] of Object.entries(routes)) table.set(p, toRoute(r));

  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const path = req.url ?? '/';
    const handler = table.get(path) ?? table.get(path.split('?')[0]) ?? table.get('*');
    if (handler === undefined) {
      res.writeHead(404, { 'Content-Type': 'text/html' });
      res.end('<h1>404 Not Found</h1>');
      return;
    }
    Promise.resolve(handler(req, res)).catch(() => res.destroy());
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://${host}:${port}`,
    port,
    requests,
    openSockets: () => sockets.size,
    route(path, handler) {
      table.set(path, toRoute(handler));
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Anything a test opens and must close: a web client, a pool. */
export interface Closable {
  close(): Promise<void>;
}

/**
 * The test servers and clients a test file opens, for its `afterEach` to close with `closeAll()`:
 * the clients first, so that the servers see their sockets end, then the servers.
 */
export class OpenedResources {
  /** The servers started by `server()` and not closed yet. */
  readonly servers: TestServer[] = [];
  private readonly closables: Closable[] = [];

  /** `startTestServer(routes)`, closed by `closeAll()`. */
  async server(
    routes: Record<string, Route | SimpleResponse> = {},
    options: TestServerOptions = {},
  ): Promise<TestServer> {
    const s = await startTestServer(routes, options);
    this.servers.push(s);
    return s;
  }

  /** Returns `client`, to be closed by `closeClients()` or `closeAll()`. */
  track<C extends Closable>(client: C): C {
    this.closables.push(client);
    return client;
  }

  /** Closes one server before the test ends (a refused connection, a leak check). */
  async closeServer(s: TestServer): Promise<void> {
    await s.close();
    const i = this.servers.indexOf(s);
    if (i >= 0) this.servers.splice(i, 1);
  }

  async closeClients(): Promise<void> {
    await Promise.all(this.closables.splice(0).map((c) => c.close()));
  }

  async closeAll(): Promise<void> {
    await this.closeClients();
    await Promise.all(this.servers.splice(0).map((s) => s.close()));
  }
}
export { lastJsonLine, type NodeRun, type NodeRunOptions, runNode } from './child.js';
export {
  type ClosingFile,
  type ClosingMode,
  type ClosingServer,
  compressibleSitemapGz,
  startClosingServer,
} from './closing-server.js';
export { startTestProxy, type TestProxy } from './proxy.js';
export {
  type FarmChange,
  type FarmOptions,
  type FarmSite,
  type FarmSiteKind,
  type SiteFarm,
  seededRandom,
  startSiteFarm,
} from './site-farm.js';
