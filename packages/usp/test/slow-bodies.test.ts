import { OpenedResources } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { walkPages } from '../src/api/tree.js';
import { createWorkerParser } from '../src/worker/pool.js';
import { testClient, until } from './tree-helpers.js';

// Issue 14 item 8: pages of a slowly arriving body reach the consumer as their bytes arrive. Each
// of three urlsets sends its first part, then waits for the consumer to have the pages of that part
// of all three before it sends the rest: the walk ends only if every body's pages flow before the
// body ends.
// (With one document per parse thread, the third waited unread for a thread, and the two in
// flight waited for its pages: nothing moved.) No clock: the server waits on the consumer.

const workerUrl = new URL('../dist/worker/worker.js', import.meta.url);
const opened = new OpenedResources();
afterEach(() => opened.closeAll());

const NAMES = ['a', 'b', 'c'];
const PARTS = 3;
const PER_PART = 40;

describe('slow bodies', () => {
  it('hand their pages on as they arrive, with the default parse worker, three bodies at once', async () => {
    const server = await opened.server();
    const o = server.origin;
    const seen = new Map<string, number>(NAMES.map((n) => [n, 0]));
    server.route('/robots.txt', {
      headers: { 'Content-Type': 'text/plain' },
      body: NAMES.map((n) => `Sitemap: ${o}/${n}.xml\n`).join(''),
    });
    for (const name of NAMES) {
      server.route(`/${name}.xml`, async (_req, res) => {
        // No Content-Length: a body of unknown size goes to a parse thread, as a large one does.
        res.writeHead(200, { 'Content-Type': 'application/xml' });
        res.write('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">');
        for (let part = 0; part < PARTS; part++) {
          let s = '';
          for (let i = part * PER_PART; i < (part + 1) * PER_PART; i++)
            s += `<url><loc>${o}/${name}/${i}</loc></url>`;
          res.write(s);
          // Every body's part, not only this one's: all three must be flowing at the same time.
          await until(() => NAMES.every((n) => (seen.get(n) ?? 0) >= (part + 1) * PER_PART) || res.destroyed);
        }
        res.end('</urlset>');
      });
    }
    // The walk's default parser (`parseWorkers: 1`): one document in this thread, one on a worker.
    const pool = createWorkerParser({ workerUrl, workers: 1, callerThreadDocuments: 1 });
    const urls: string[] = [];
    try {
      for await (const { page } of walkPages(`${o}/`, {
        webClient: opened.track(testClient({ bodyIdleTimeoutMs: 60_000, requestTimeoutMs: 60_000 })),
        useKnownPaths: false,
        parse: pool.parse,
      })) {
        urls.push(page.url);
        const name = new URL(page.url).pathname.split('/')[1];
        seen.set(name, (seen.get(name) ?? 0) + 1);
      }
    } finally {
      await pool.close();
    }
    expect(urls).toHaveLength(NAMES.length * PARTS * PER_PART);
    expect([...seen.values()]).toEqual([PARTS * PER_PART, PARTS * PER_PART, PARTS * PER_PART]);
  });
});
