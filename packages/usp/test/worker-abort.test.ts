import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Warning } from '@usp-ts/core';
import { OpenedResources } from '@usp-ts/test-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sitemapTreeForHomepage } from '../src/api/tree.js';
import { createWorkerParser } from '../src/worker/pool.js';
import { testClient, until } from './tree-helpers.js';

// Issue 14 item 7: an abort (the deadline, Ctrl-C, the caller's signal: one path in the walk)
// ends the walk at once even while the parse worker is stuck in a step that does not return,
// keeping the pages the worker had already sent. The worker here blocks in an extension for two
// minutes; the walk must not wait for it.

const workerUrl = new URL('../dist/worker/worker.js', import.meta.url);
const BLOCK_NS = 'urn:usp-test:block';

let dir: string;
let blockedFlag: string;
let blockModule: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'usp-worker-abort-'));
  blockedFlag = join(dir, 'blocked');
  blockModule = pathToFileURL(join(dir, 'block.mjs')).href;
  // Blocks the worker thread (not the test's) without using CPU; the flag file tells the test.
  writeFileSync(
    join(dir, 'block.mjs'),
    `import { writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
export default {
  name: 'block',
  namespaces: [${JSON.stringify(BLOCK_NS)}],
  create: () => ({
    open(el) {
      if (isMainThread || el.local !== 'block') return;
      writeFileSync(${JSON.stringify(blockedFlag)}, '1');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 120000);
    },
    close() {},
  }),
};
`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const opened = new OpenedResources();
afterEach(() => opened.closeAll());

const page = (o: string, i: number) => `<url><loc>${o}/p/${i}</loc></url>`;

describe('an abort while the parse worker is stuck', () => {
  it('ends the walk without waiting for the worker, keeping the pages it sent', async () => {
    const server = await opened.server();
    const o = server.origin;
    let seen = 0;
    server.route('/robots.txt', { headers: { 'Content-Type': 'text/plain' }, body: `Sitemap: ${o}/s.xml\n` });
    server.route('/s.xml', async (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/xml' });
      let first = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:b="${BLOCK_NS}">`;
      for (let i = 0; i < 20; i++) first += page(o, i);
      res.write(first);
      // The next bytes only once the consumer has the first pages: they left the worker.
      await until(() => seen === 20 || res.destroyed);
      res.write(`<url><loc>${o}/stuck</loc><b:block/></url>${page(o, 20)}`);
      // Never ends: the abort must cut it.
    });
    const pool = createWorkerParser({
      workerUrl,
      workers: 1,
      inlineBelowBytes: 0,
      pluginModules: [blockModule],
    });
    const controller = new AbortController();
    const warnings: Warning[] = [];
    try {
      const tree = sitemapTreeForHomepage(`${o}/`, {
        webClient: opened.track(testClient({ bodyIdleTimeoutMs: 120_000, requestTimeoutMs: 120_000 })),
        parse: (opts) =>
          pool.parse({
            ...opts,
            onPages: async (pages, type) => {
              seen += pages.length;
              await opts.onPages?.(pages, type);
            },
          }),
        useKnownPaths: false,
        signal: controller.signal,
        onWarning: (w) => warnings.push(w),
      });
      await until(() => existsSync(blockedFlag));
      const abortedAt = performance.now();
      controller.abort();
      const root = await tree;
      // The worker is blocked for 120 s; the walk ends long before (about 0.2 s, with room for load).
      expect(performance.now() - abortedAt).toBeLessThan(20_000);
      expect([...root.allPages()].map((p) => p.url)).toEqual(
        Array.from({ length: 20 }, (_, i) => `${o}/p/${i}`),
      );
      expect(root.summary.outcome).toBe('partial');
      expect(warnings.some((w) => w.code === 'truncated' && w.url === `${o}/s.xml`)).toBe(true);
    } finally {
      await pool.close();
    }
  });
});
