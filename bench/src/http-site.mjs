// The HTTP client's cost a "site": k GETs to one host, two at a time, then its idle connections
// closed, as `usp batch` does each site (issue 37). The server (node:http, keep-alive) runs in a
// child process on loopback addresses of its own, so the CPU measured here is the client's.
//
//   node src/http-site.mjs [--client fetcher|request|dispatch] [--fetcher DIR] [--sites N]
//     [--warm N] [--mix fresh|nochange] [--hosts N] [--keep] [--k N]
//
// --k N: the first N of those 14 requests only.
// --signal: each site's requests carry an AbortSignal of the site's own, as a batch walk's do.
// --connections N --pipelining N: the undici Pools of --client request|dispatch (default 2, 1).
// --keep: idle connections stay open between sites (the difference is the connections' cost).
// --fetcher DIR: a built @usp-ts/fetcher (its dist/index.js) other than this checkout's, for A/B.
// --mix fresh: per site a 200 robots.txt, 12 404 probes and a 200 sitemap of ~40 KB (what a fresh
// batch site asks); nochange: the same with 304s for the 200s. USP_CALLGRIND=1 counts instructions
// of the measured sites only (valgrind --tool=callgrind --instr-atstart=no).
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const { values: a } = parseArgs({
  options: {
    client: { type: 'string', default: 'fetcher' },
    fetcher: { type: 'string', default: join(here, '../../packages/fetcher') },
    sites: { type: 'string', default: '400' },
    warm: { type: 'string', default: '100' },
    mix: { type: 'string', default: 'fresh' },
    hosts: { type: 'string', default: '50' },
    serve: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    k: { type: 'string', default: '14' },
    signal: { type: 'boolean', default: false },
    connections: { type: 'string', default: '2' },
    pipelining: { type: 'string', default: '1' },
  },
});

const PROBES = 12;
const SITEMAP = `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${Array.from(
  { length: 300 },
  (_, i) => `<url><loc>https://example.com/page/${i}</loc><lastmod>2026-01-01</lastmod></url>`,
).join('\n')}\n</urlset>\n`;

if (a.serve) {
  const { createServer } = await import('node:http');
  const hosts = Number(a.hosts);
  const origins = [];
  let connections = 0;
  process.on('message', () => process.send(connections));
  for (let i = 1; i <= hosts; i++) {
    const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
      const nochange = req.headers['if-none-match'] !== undefined;
      if (req.url === '/robots.txt' || req.url === '/sitemap.xml') {
        if (nochange) {
          res.writeHead(304, { etag: '"x"' });
          res.end();
          return;
        }
        const body = req.url === '/robots.txt' ? 'User-agent: *\nSitemap: /sitemap.xml\n' : SITEMAP;
        res.writeHead(200, {
          'content-type': 'text/plain',
          'content-length': Buffer.byteLength(body),
          etag: '"x"',
        });
        res.end(body);
        return;
      }
      res.writeHead(404, { 'content-type': 'text/html', 'content-length': 9 });
      res.end('not found');
    });
    server.on('connection', () => connections++);
    await new Promise((r) => server.listen(0, `127.79.0.${i}`, r));
    origins.push(`http://127.79.0.${i}:${server.address().port}`);
  }
  process.send(origins);
} else {
  const child = fork(fileURLToPath(import.meta.url), ['--serve', '--hosts', a.hosts], { stdio: 'inherit' });
  const origins = await new Promise((r) => child.once('message', r));
  const nochange = a.mix === 'nochange';
  const headers = nochange ? { 'if-none-match': '"x"' } : {};
  const paths = [
    '/robots.txt',
    ...Array.from({ length: PROBES }, (_, i) => `/probe-${i}.xml`),
    '/sitemap.xml',
  ].slice(0, Number(a.k));
  const site = await makeClient(a.client, resolve(a.fetcher));
  const n = Number(a.sites);
  const warm = Number(a.warm);
  for (let i = 0; i < warm; i++) await runSite(site, origins[i % origins.length], paths, headers);
  const callgrind = process.env.USP_CALLGRIND === '1';
  const { execSync } = await import('node:child_process');
  if (callgrind) execSync(`callgrind_control -i on ${process.pid}`);
  const t0 = process.cpuUsage();
  const w0 = performance.now();
  for (let i = 0; i < n; i++) await runSite(site, origins[(warm + i) % origins.length], paths, headers);
  const cpu = process.cpuUsage(t0);
  const wall = performance.now() - w0;
  if (callgrind) execSync(`callgrind_control -i off ${process.pid}`);
  child.send('count');
  const connections = await new Promise((r) => child.once('message', r));
  await site.close();
  child.kill();
  const perSite = (cpu.user + cpu.system) / n;
  console.log(
    JSON.stringify({
      client: a.client,
      fetcher: a.fetcher,
      mix: a.mix,
      sites: n,
      connectionsPerSite: +(connections / (n + warm)).toFixed(2),
      cpuUsPerSite: Math.round(perSite),
      userUs: Math.round(cpu.user / n),
      sysUs: Math.round(cpu.system / n),
      wallMsPerSite: +(wall / n).toFixed(3),
    }),
  );
}

/** Two at a time, as a batch site's probes run at --per-host 2. */
async function runSite(site, origin, paths, headers) {
  let next = 0;
  const signal = a.signal ? new AbortController().signal : undefined;
  const worker = async () => {
    while (next < paths.length) {
      const p = paths[next++];
      await site.get(`${origin}${p}`, headers, signal);
    }
  };
  await Promise.all([worker(), worker()]);
  if (!a.keep) site.done(new URL(origin).hostname);
}

async function makeClient(kind, fetcherDir) {
  if (kind === 'fetcher') {
    const { createWebClient } = await import(pathToFileURL(join(fetcherDir, 'dist/index.js')).href);
    const client = createWebClient({
      allowPrivateNetworks: true,
      maxConcurrentRequests: 32,
      maxConnectionsPerHost: 2,
      keepAliveTimeoutMs: 30_000,
      requestTimeoutMs: 10_000,
    });
    return {
      async get(url, headers, signal) {
        const r = await client.get(url, { ifNoneMatch: headers['if-none-match'], signal });
        if (r.kind === 'ok') for await (const _ of r.body);
      },
      done: (host) => client.closeIdle([host]),
      close: () => client.close(),
    };
  }
  const require = createRequire(join(fetcherDir, 'package.json'));
  const { Pool } = require('undici');
  const pools = new Map();
  const pool = (origin) => {
    let p = pools.get(origin);
    if (p === undefined) {
      p = new Pool(origin, {
        connections: Number(a.connections),
        pipelining: Number(a.pipelining),
        keepAliveTimeout: 30_000,
      });
      pools.set(origin, p);
    }
    return p;
  };
  const done = (host) => {
    for (const [o, p] of pools) {
      if (new URL(o).hostname !== host) continue;
      pools.delete(o);
      p.close();
    }
  };
  if (kind === 'request') {
    return {
      async get(url, headers) {
        const u = new URL(url);
        const r = await pool(u.origin).request({ path: u.pathname, method: 'GET', headers });
        for await (const _ of r.body);
      },
      done,
      close: async () => {},
    };
  }
  // dispatch with a handler that builds nothing
  return {
    get(url, headers) {
      const u = new URL(url);
      return new Promise((res, rej) => {
        pool(u.origin).dispatch(
          { origin: u.origin, path: u.pathname, method: 'GET', headers },
          {
            onConnect() {},
            onHeaders() {
              return true;
            },
            onData() {
              return true;
            },
            onComplete: res,
            onError: rej,
          },
        );
      });
    },
    done,
    close: async () => {},
  };
}
