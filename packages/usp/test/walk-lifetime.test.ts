import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { lastJsonLine, type NodeRun, runNode, startTestServer, type TestServer } from '@usp-ts/test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A walk's workers, sockets and timers may keep the process alive only while its consumer awaits
// next() or return(). That is about the whole process, so each case runs in a child process whose
// event loop holds nothing but the walk (the server lives here, in the test process), and the
// child's own exit is what is asserted.

/** Tests run what users run: the built package. `pnpm test` (turbo) builds it first. */
const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url));
if (!existsSync(DIST)) throw new Error(`${DIST} is missing: run \`pnpm --filter usp build\` first`);

const URLSETS = 4;
const URLS_PER_SET = 20_000;
const TOTAL = URLSETS * URLS_PER_SET;
/** Only reached when a child hangs: a child that works exits in a few seconds. */
const HANG_GUARD_MS = 30_000;

const CHILD = `
const [mode, dist, url, extra, workers] = process.argv.slice(2);
const usp = await import(dist);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');

if (mode === 'abandon') {
  // Pulls some pages, then forgets the iterator: no return(), no break.
  const it = usp.walkSitemapPages(url, { parseWorkers: Number(workers) })[Symbol.asyncIterator]();
  let n = 0;
  while (n < Number(extra)) {
    const r = await it.next();
    if (r.done) break;
    n++;
  }
  out({ pulled: n, stats: it.stats });
} else if (mode === 'collect') {
  // Abandoned, then garbage-collected: what the walk opened is closed (seen here by its sockets:
  // the client is closed after the workers are).
  const sockets = new Set();
  (await import('node:diagnostics_channel')).subscribe('net.client.socket', (m) => sockets.add(m.socket));
  const open = () => [...sockets].filter((s) => !s.destroyed).length;
  let walk = usp.walkSitemapPages(url, { parseWorkers: 1 });
  for (let n = 0; n < 500; n++) await walk.next();
  const inFlight = walk.stats.sitemapsInFlight;
  walk = null;
  const before = open();
  // Forced collections until the finaliser has run: over as soon as it has, bounded if it never does.
  for (let i = 0; i < 200 && open() > 0; i++) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 10));
  }
  out({ inFlight, before, after: open() });
} else if (mode === 'all') {
  // Nothing but the walk holds the process while next() is awaited.
  let n = 0;
  const walk = usp.walkSitemapPages(url, { parseWorkers: 1 });
  for await (const _ of walk) n++;
  out({ count: n });
} else if (mode === 'slow') {
  // Yields to the event loop between pages (the walk is let go meanwhile), and once stays away
  // for a few turns, then carries on.
  let n = 0;
  const turn = () => new Promise((r) => setImmediate(r));
  for await (const _ of usp.walkSitemapPages(url, { parseWorkers: 1 })) {
    n++;
    await turn();
    if (n === 100) for (let i = 0; i < 50; i++) await turn();
  }
  out({ count: n });
} else if (mode === 'pool-default' || mode === 'pool-unref') {
  // createWorkerParser used directly: an awaited parse settles by default, without close().
  const pool = usp.createWorkerParser({ workers: 1, inlineBelowBytes: 0 });
  if (mode === 'pool-unref') pool.unref();
  let xml = '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">';
  for (let i = 0; i < 5000; i++) xml += '<url><loc>https://example.com/p' + i + '</loc></url>';
  xml += '</urlset>';
  const doc = await pool.parse({
    url: 'https://example.com/sitemap.xml',
    body: new TextEncoder().encode(xml),
    registry: usp.createDefaultRegistry(),
  });
  out({ type: doc.type, pages: doc.pageCount ?? null });
}
`;

let dir = '';
let script = '';
let site: TestServer;

async function runChild(
  mode: string,
  url = '',
  extra = '',
  workers = '1',
): Promise<NodeRun & { out: Record<string, unknown> | null }> {
  const args = [script, mode, pathToFileURL(DIST).href, url, extra, workers];
  if (mode === 'collect') args.unshift('--expose-gc');
  const r = await runNode(args, { guardMs: HANG_GUARD_MS });
  return { ...r, out: lastJsonLine(r) };
}

function urlset(set: number): string {
  const parts = [
    '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
  ];
  for (let i = 0; i < URLS_PER_SET; i++) {
    parts.push(
      `<url><loc>https://example.com/s${set}/page-${i}.html</loc><lastmod>2026-01-02</lastmod><priority>0.5</priority></url>`,
    );
  }
  parts.push('</urlset>');
  return parts.join('\n');
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'usp-lifetime-'));
  script = join(dir, 'child.mjs');
  writeFileSync(script, CHILD);
  const routes: Record<string, { headers: Record<string, string>; body: string }> = {};
  const xml = { 'Content-Type': 'application/xml' };
  const head = '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">';
  let entries = '';
  for (let s = 1; s <= URLSETS; s++) {
    // Bodies of ~2 MB: far more than socket buffers hold, so prefetches stay paused mid-body.
    routes[`/set-${s}.xml`] = { headers: xml, body: urlset(s) };
    entries += `<sitemap><loc>/set-${s}.xml</loc></sitemap>`;
  }
  routes['/index.xml'] = { headers: xml, body: `${head}${entries}</sitemapindex>` };
  site = await startTestServer(routes);
  // A urlset a slow server never finishes sending. Its socket keeps reading: too slow to ever fill
  // the buffers that would pause it (a paused socket does not hold the process in any case).
  site.route('/drip.xml', (_req, res) => {
    res.writeHead(200, xml);
    res.write('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">');
    let i = 0;
    const t = setInterval(() => res.write(`<url><loc>https://example.com/drip/${i++}</loc></url>`), 50);
    res.on('close', () => clearInterval(t));
  });
  site.route('/index-drip.xml', {
    headers: xml,
    body: `${head}<sitemap><loc>/drip.xml</loc></sitemap>${entries}</sitemapindex>`,
  });
});

afterAll(async () => {
  await site?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a walk keeps the process alive only while it is awaited', () => {
  it('an abandoned walk (no return(), no break) lets the process exit on its own', async () => {
    const r = await runChild('abandon', `${site.origin}/index.xml`, '500');
    expect(r.stderr).toBe('');
    expect(r.hung).toBe(false);
    expect(r.code).toBe(0);
    const out = r.out as { pulled: number; stats: { sitemapsInFlight: number } };
    expect(out.pulled).toBe(500);
    // The walk was mid-site when it was abandoned: documents in flight, bodies unread.
    expect(out.stats.sitemapsInFlight).toBeGreaterThan(0);
  });

  it('an abandoned walk with a body still arriving (in-thread parsing) lets the process exit', async () => {
    const r = await runChild('abandon', `${site.origin}/index-drip.xml`, '200', '0');
    expect(r.stderr).toBe('');
    expect(r.hung).toBe(false);
    expect(r.code).toBe(0);
    expect((r.out as { pulled: number }).pulled).toBe(200);
  });

  it('a consumer awaiting next() with nothing else alive gets every page', async () => {
    const r = await runChild('all', `${site.origin}/index.xml`);
    expect(r.stderr).toBe('');
    expect(r.hung).toBe(false);
    // 13: Node's exit code for a top-level await left unsettled when the event loop ran dry.
    expect(r.code).toBe(0);
    expect(r.out).toEqual({ count: TOTAL });
  });

  it('a consumer that yields between pages, and once stays away a while, gets every page', async () => {
    const r = await runChild('slow', `${site.origin}/index.xml`);
    expect(r.stderr).toBe('');
    expect(r.hung).toBe(false);
    expect(r.code).toBe(0);
    expect(r.out).toEqual({ count: TOTAL });
  });
});

describe('a walk dropped unfinished and garbage-collected', () => {
  it('is closed: its workers and its own client', async () => {
    const r = await runChild('collect', `${site.origin}/index.xml`);
    expect(r.stderr).toBe('');
    expect(r.hung).toBe(false);
    expect(r.code).toBe(0);
    const out = r.out as { inFlight: number; before: number; after: number };
    expect(out.inFlight).toBeGreaterThan(0);
    expect(out.before).toBeGreaterThan(0);
    expect(out.after).toBe(0);
  });
});

describe('createWorkerParser ref()/unref()', () => {
  it('by default an awaited parse settles, and the idle pool then lets the process exit', async () => {
    const r = await runChild('pool-default');
    expect(r.stderr).toBe('');
    expect(r.hung).toBe(false);
    expect(r.code).toBe(0);
    expect(r.out).toEqual({ type: 'PagesXMLSitemap', pages: 5000 });
  });

  it('unref(): a busy worker does not hold the process (the awaited parse is left unsettled)', async () => {
    const r = await runChild('pool-unref');
    expect(r.hung).toBe(false);
    // 13: the top-level await never settled because the process was let exit under it.
    expect(r.code).toBe(13);
    expect(r.out).toBeNull();
  });
});
