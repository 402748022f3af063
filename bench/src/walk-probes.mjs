// The walk's own cost of a site whose every request answers 404 (robots.txt and the 14 known
// paths, as most sites of the batch farm answer most of their probes): core's walk over a client
// that answers at once, so what is measured is the walk's per-request bookkeeping (the request's
// options, the fetch step, the invalid node and its message, the result, the tree's places) and
// none of the HTTP client's (issue 37, session 23).
//
//   node src/walk-probes.mjs [--sites N] [--warm N]
//
// USP_CALLGRIND=1 counts instructions of the measured sites only
// (valgrind --tool=callgrind --instr-atstart=no node src/walk-probes.mjs …).
import { execSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { createRegistry, sitemapTreeForHomepageWithClient } from '@usp-ts/core';

const { values: a } = parseArgs({
  options: {
    sites: { type: 'string', default: '3000' },
    warm: { type: 'string', default: '1000' },
  },
});

let requests = 0;
/** What the fetcher answers a 404 with (`FetchErrorResponse`). */
const client = {
  async get(url) {
    requests++;
    return {
      kind: 'error',
      url,
      status: 404,
      message: '404 Not Found',
      code: 'http-status',
      retryable: false,
      attempts: 1,
    };
  },
};
const registry = createRegistry([]);
const site = (i) =>
  sitemapTreeForHomepageWithClient(`http://site-${i}.example/`, { webClient: client, registry });

const n = Number(a.sites);
const warm = Number(a.warm);
for (let i = 0; i < warm; i++) await site(i);
const callgrind = process.env.USP_CALLGRIND === '1';
if (callgrind) execSync(`callgrind_control -i on ${process.pid}`);
const t0 = process.cpuUsage();
for (let i = 0; i < n; i++) await site(warm + i);
const cpu = process.cpuUsage(t0);
if (callgrind) execSync(`callgrind_control -i off ${process.pid}`);
console.log(
  JSON.stringify({
    sites: n,
    requestsPerSite: requests / (n + warm),
    cpuUsPerSite: Math.round((cpu.user + cpu.system) / n),
  }),
);
