import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { types } from 'node:util';
import type { Worker } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import { documentView, hasCorpus, loadCases, readCase, withPortPlaceholder } from '@usp-ts/conformance';
import {
  headerLookup,
  InvalidOptionError,
  memoryPageStore,
  type Page,
  type ParseDocumentOptions,
  parseDocument,
  SitemapDate,
  type StoredPages,
} from '@usp-ts/core';
import { sitemapFromDocument } from '@usp-ts/core/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeGunzip } from '../src/node/gunzip.js';
import { decodePages, encodePages, encodeRecords } from '../src/pages/codec.js';
import { filePageStore } from '../src/pages/file-store.js';
import { PAGE_RECORDS_FORMAT, RecordBuffer, recordPages } from '../src/pages/records.js';
import { createDefaultRegistry } from '../src/plugins/defaults.js';
import {
  createStoringWorkerParser,
  createWorkerParser,
  tuneParseWorkers,
  type WorkerParser,
} from '../src/worker/pool.js';
import { runSiteCase } from './site-cases.js';

// The worker script runs compiled (Node 20 cannot load .ts in a worker): the build comes first.
const workerUrl = new URL('../dist/worker/worker.js', import.meta.url);

const NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';
const IMAGE_NS = 'http://www.google.com/schemas/sitemap-image/1.1';
const NEWS_NS = 'http://www.google.com/schemas/sitemap-news/0.9';

function urlset(n: number, extra = (_i: number) => ''): string {
  let s = `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="${NS}" xmlns:image="${IMAGE_NS}" xmlns:news="${NEWS_NS}">\n`;
  for (let i = 0; i < n; i++) {
    s += `<url><loc>https://example.com/p/${i}</loc><lastmod>2024-03-0${1 + (i % 9)}T10:20:30.123456+02:00</lastmod>`;
    s += `<changefreq>${i % 2 ? 'daily' : 'weekly'}</changefreq><priority>0.${i % 10}</priority>${extra(i)}</url>\n`;
  }
  return `${s}</urlset>\n`;
}

const registry = createDefaultRegistry();
const pools: WorkerParser[] = [];
function pool(options: Parameters<typeof createWorkerParser>[0] = {}): WorkerParser {
  const p = createWorkerParser({ workerUrl, inlineBelowBytes: 0, ...options });
  pools.push(p);
  return p;
}
afterEach(async () => {
  for (const p of pools.splice(0)) await p.close();
});

async function* chunked(bytes: Uint8Array, size = 4096): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

/** A body in 4 KiB chunks that counts the bytes the parser has pulled from it. */
/** 300 ordinary pages (no news, images or alternates): dates with and without a zone, odd priorities. */
function ordinaryPages(): Page[] {
  return Array.from({ length: 300 }, (_, i) => ({
    url: i % 50 === 0 ? `https://a.example/é/${i}` : `https://a.example/p/${i}`,
    priority: [0.5, -0, Number.NaN][i % 3],
    lastModified: i % 4 === 0 ? null : new SitemapDate(1_700_000_000_000 + i, i % 4 === 1 ? null : 60, i),
    changeFrequency: i % 5 === 0 ? null : 'daily',
    newsStory: null,
    images: null,
    alternates: null,
  }));
}

/**
 * Stores `batch` with `appendPages` and `pages` one by one in a temp-file store, checks both
 * files hold the same bytes, then hands both stored lists to `check`.
 */
function storedBothWays(
  batch: Page[],
  records: Uint8Array | null,
  pages: Page[],
  check: (byRecords: StoredPages, byPage: StoredPages) => void,
): void {
  const dir = mkdtempSync(join(tmpdir(), 'usp-codec-'));
  try {
    const store = filePageStore({ dir });
    const byRecords = store.open('https://a.example/1.xml');
    byRecords.appendPages?.(
      batch,
      records === null ? undefined : { format: PAGE_RECORDS_FORMAT, bytes: records },
    );
    const byPage = store.open('https://a.example/2.xml');
    for (const p of pages) byPage.append(p);
    const [a, b] = [byRecords.close(), byPage.close()];
    expect(a.count).toBe(pages.length);
    const files = readdirSync(store.dir ?? '').sort();
    expect(readFileSync(join(store.dir ?? '', files[0]))).toEqual(
      readFileSync(join(store.dir ?? '', files[1])),
    );
    check(a, b);
    store.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function countedBody(bytes: Uint8Array): { body: AsyncGenerator<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  async function* body(): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < bytes.length; i += 4096) {
      pulled += Math.min(4096, bytes.length - i);
      yield bytes.subarray(i, i + 4096);
    }
  }
  return { body: body(), pulled: () => pulled };
}

async function collect(
  parse: (o: ParseDocumentOptions) => Promise<unknown>,
  body: () => AsyncIterable<Uint8Array>,
) {
  const pages: Page[] = [];
  const warnings: string[] = [];
  const parsed = (await parse({
    url: 'https://example.com/sitemap.xml',
    body: body(),
    registry,
    onPages: (batch) => {
      pages.push(...batch);
    },
    onWarning: (w) => warnings.push(w.code),
  })) as Awaited<ReturnType<typeof parseDocument>>;
  return { parsed, pages, warnings };
}

describe('page batches across threads', () => {
  it('round-trip dates with their prototype, zone and microseconds, and the extension data', () => {
    const pages: Page[] = [
      {
        url: 'https://a.example/1',
        priority: 0.3,
        lastModified: new SitemapDate(1_700_000_000_000, 120, 456),
        changeFrequency: 'daily',
        newsStory: {
          title: 'T',
          publishDate: new SitemapDate(1_600_000_000_000, null, 0),
          publicationName: 'P',
          publicationLanguage: 'en',
          access: null,
          genres: ['Blog'],
          keywords: ['a', 'b'],
          stockTickers: [],
        },
        images: [
          { loc: 'https://a.example/i.jpg', caption: null, geoLocation: null, title: 'x', license: null },
        ],
        alternates: [{ hreflang: 'de', href: 'https://a.example/de/1' }],
      },
      {
        url: 'https://a.example/2',
        priority: 0.5,
        lastModified: null,
        changeFrequency: null,
        newsStory: null,
        images: null,
        alternates: null,
      },
    ];
    const back = decodePages(structuredClone(encodePages(pages)));
    expect(back).toEqual(pages);
    expect(back[0].lastModified).toBeInstanceOf(SitemapDate);
    expect(back[0].lastModified?.toSourceString()).toBe(pages[0].lastModified?.toSourceString());
    expect(back[0].newsStory?.publishDate).toBeInstanceOf(SitemapDate);
    expect(back[0].newsStory?.publishDate?.hasZone).toBe(false);
  });
  it('carry the records of a batch of ordinary pages, which the file store takes as they are', () => {
    const pages = ordinaryPages();
    const batch = structuredClone(encodePages(pages));
    const back = decodePages(batch);
    expect(back).toEqual(pages);
    expect(batch.records).not.toBeNull();
    storedBothWays(back, batch.records, pages, (a, b) => {
      const loaded = a.load();
      expect(loaded).toEqual(pages);
      expect(loaded.map((p) => Object.is(p.priority, -0))).toEqual(
        pages.map((p) => Object.is(p.priority, -0)),
      );
      expect(b.load()).toEqual(pages);
    });
  });

  it('carry no records when a page is not an ordinary one, and the store encodes each page', () => {
    const pages: Page[] = [
      {
        url: 'https://a.example/1',
        priority: 0.5,
        lastModified: null,
        changeFrequency: null,
        newsStory: null,
        images: null,
        alternates: null,
      },
      {
        url: 'https://a.example/\ud800',
        priority: 0.5,
        lastModified: null,
        changeFrequency: null,
        newsStory: null,
        images: null,
        alternates: null,
      },
    ];
    const batch = structuredClone(encodePages(pages));
    const back = decodePages(batch);
    expect(back).toEqual(pages);
    expect(batch.records).toBeNull();
    const dir = mkdtempSync(join(tmpdir(), 'usp-codec-'));
    try {
      const store = filePageStore({ dir });
      const w = store.open('https://a.example/1.xml');
      w.appendPages?.(back);
      expect(w.close().load()).toEqual(pages);
      store.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('page batches as records alone (a tree in the temp-file store)', () => {
  const pages = ordinaryPages();

  it('give the pages back when read, cut or whole, and the store the same file', () => {
    const records = encodeRecords(pages, new RecordBuffer(256));
    expect(records).not.toBeNull();
    const back = recordPages(pages.length, structuredClone(records as Uint8Array));
    expect(back.length).toBe(300);
    // The walk's cut at maxPages slices the batch: real pages, stored one by one.
    const cut = back.slice(0, 10);
    expect(cut).toEqual(pages.slice(0, 10));
    expect(back).toEqual(pages);
    expect([...back].map((p) => Object.is(p.priority, -0))).toEqual(
      pages.map((p) => Object.is(p.priority, -0)),
    );
    storedBothWays(recordPages(pages.length, records as Uint8Array), records, pages, (a, b) =>
      expect(a.load()).toEqual(b.load()),
    );
  });

  it('are not made when a page is not an ordinary one', () => {
    const scratch = new RecordBuffer(256);
    const odd = {
      ...pages[1],
      images: [
        { loc: 'https://a.example/i.png', caption: null, geoLocation: null, title: null, license: null },
      ],
    };
    expect(encodeRecords([pages[0], odd, pages[2]], scratch)).toBeNull();
    expect(encodeRecords([pages[0], { ...pages[1], url: 'https://a.example/\ud800' }], scratch)).toBeNull();
    // Nothing of a refused batch is left in the scratch buffer for the next one.
    expect(encodeRecords([pages[3]], scratch)).toEqual(encodeRecords([pages[3]], new RecordBuffer(256)));
  });

  it("cross from a storing pool's worker: no URL cloned, no page made until one is read", async () => {
    const xml = new TextEncoder().encode(
      urlset(3000, (i) =>
        i === 2500 ? '<image:image><image:loc>https://example.com/i/1.jpg</image:loc></image:image>' : '',
      ),
    );
    const storing = createStoringWorkerParser({ workerUrl, inlineBelowBytes: 0, workers: 1 });
    pools.push(storing);
    const batches: Page[][] = [];
    /** Per batch: whether it is a lazy view of records (what the file store takes as they are). */
    const lazy: boolean[] = [];
    await storing.parse({
      url: 'https://example.com/sitemap.xml',
      body: chunked(xml),
      registry,
      onPages: (batch, _type, encoded) => {
        lazy.push(types.isProxy(batch) && encoded?.format === PAGE_RECORDS_FORMAT);
        batches.push(batch);
      },
    });
    const inThread = await collect(parseDocument, () => chunked(xml));
    expect(batches.length).toBeGreaterThan(2);
    // Every batch of ordinary pages came as records; the one with an image as pages.
    expect(lazy.filter((l) => !l).length).toBe(1);
    expect(batches.flat()).toEqual(inThread.pages);
  });
});

describe('createWorkerParser', () => {
  it('gives the same pages, node and warnings as parsing in-thread', async () => {
    const xml = new TextEncoder().encode(
      urlset(3000, (i) =>
        i % 7 === 0 ? `<image:image><image:loc>https://example.com/i/${i}.jpg</image:loc></image:image>` : '',
      ).replace('<loc>https://example.com/p/5</loc>', '<loc>not a url</loc>'),
    );
    const inThread = await collect(parseDocument, () => chunked(xml));
    const inWorker = await collect(pool({ workers: 1 }).parse, () => chunked(xml));
    expect(inWorker.pages.length).toBe(2999);
    expect(inWorker.pages).toEqual(inThread.pages);
    expect(inWorker.pages[0].lastModified).toBeInstanceOf(SitemapDate);
    expect(inWorker.warnings).toEqual(inThread.warnings);
    expect(inWorker.parsed).toEqual(inThread.parsed);
    expect(inWorker.parsed.truncated).toBe(false);
    expect(inWorker.parsed.bytes).toBe(inThread.parsed.bytes);
  });

  it("starts workers with the CLI's young generation and external-memory collections once tuned, same pages", async () => {
    const xml = new TextEncoder().encode(urlset(2000));
    const started: Worker[] = [];
    const onWorker = (w: Worker) => started.push(w);
    process.on('worker', onWorker);
    try {
      const plain = await collect(
        pool({ workers: 1, resourceLimits: { maxYoungGenerationSizeMb: 4 } }).parse,
        () => chunked(xml),
      );
      tuneParseWorkers({ youngGenerationMb: 12, externalGcStepMb: 1 });
      const tuned = await collect(
        pool({ workers: 1, resourceLimits: { maxYoungGenerationSizeMb: 4 } }).parse,
        () => chunked(xml),
      );
      expect(started.length).toBe(2);
      expect(started[0].resourceLimits?.maxYoungGenerationSizeMb).toBe(4);
      // 12 MB: semi-spaces of 4 MiB, as the CLI's main thread has.
      expect(started[1].resourceLimits?.maxYoungGenerationSizeMb).toBe(12);
      expect(tuned.pages.length).toBe(2000);
      expect(tuned.pages).toEqual(plain.pages);
      expect(tuned.parsed).toEqual(plain.parsed);
    } finally {
      process.off('worker', onWorker);
      tuneParseWorkers({ youngGenerationMb: null, externalGcStepMb: null });
    }
  });

  it('gunzips in the worker and returns an index with its children and their dates', async () => {
    let s = `<?xml version="1.0"?><sitemapindex xmlns="${NS}">`;
    for (let i = 0; i < 50; i++)
      s += `<sitemap><loc>https://example.com/s${i}.xml</loc><lastmod>2023-0${1 + (i % 9)}-02</lastmod></sitemap>`;
    const gz = gzipSync(`${s}</sitemapindex>`);
    const { parsed } = await collect(pool().parse, () => chunked(gz, 100));
    expect(parsed.type).toBe('IndexXMLSitemap');
    expect(parsed.children.length).toBe(50);
    expect(parsed.children[3].url).toBe('https://example.com/s3.xml');
    expect(parsed.children[3].lastModified).toBeInstanceOf(SitemapDate);
    expect(parsed.children[3].lastModified?.toSourceString()).toBe('2023-04-02T00:00:00');
    expect(parsed.gzipLayers).toBe(1);
  });

  it('keeps the pages read before the body broke off, as a truncated document', async () => {
    const xml = new TextEncoder().encode(urlset(2000));
    async function* broken() {
      yield xml.subarray(0, 60_000);
      throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    }
    const inThread = await collect(parseDocument, broken);
    const inWorker = await collect(pool().parse, broken);
    expect(inWorker.parsed.truncated).toBe(true);
    expect(inWorker.pages.length).toBeGreaterThan(100);
    expect(inWorker.pages).toEqual(inThread.pages);
    expect(inWorker.warnings).toEqual(inThread.warnings);
  });

  it('reads no further ahead than maxBytesInFlight while the consumer holds a batch', async () => {
    const xml = new TextEncoder().encode(urlset(20_000));
    const counted = countedBody(xml);
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let batches = 0;
    let pulledWhileHeld = 0;
    const parser = pool({ maxBytesInFlight: 32 * 1024 });
    const done = parser.parse({
      url: 'https://example.com/big.xml',
      body: counted.body,
      registry,
      onPages: async () => {
        batches++;
        if (batches === 1) {
          // Give the worker every chance to run ahead, then look at how much was read.
          await new Promise((r) => setTimeout(r, 50));
          pulledWhileHeld = counted.pulled();
          await held;
        }
      },
    });
    await new Promise((r) => setTimeout(r, 200));
    release();
    const parsed = await done;
    expect(parsed.type).toBe('PagesXMLSitemap');
    // One window of unacknowledged batches plus the bytes in flight, far from the whole body.
    expect(pulledWhileHeld).toBeLessThan(256 * 1024);
    expect(counted.pulled()).toBe(xml.length);
  });

  it('parses ahead of a consumer that is busy: many batches before the first is acknowledged', async () => {
    // The main thread acknowledges a batch only between its own steps (it parses a document
    // too); a worker that waits for each acknowledgement idles while the main thread is busy.
    const xml = new TextEncoder().encode(urlset(20_000));
    const counted = countedBody(xml);
    let batches = 0;
    let pulledWhileHeld = 0;
    const parser = pool({ maxBytesInFlight: 32 * 1024 });
    const parsed = await parser.parse({
      url: 'https://example.com/big.xml',
      body: counted.body,
      registry,
      onPages: async () => {
        batches++;
        if (batches > 1) return;
        // Holds the first batch until the worker has read 48 KiB past the 32 KiB in flight (a
        // dozen batches of 4 KiB), or gives up: with a window of 2 it stopped at 40 KiB.
        const until = Date.now() + 5_000;
        while (counted.pulled() < 80 * 1024 && Date.now() < until) await new Promise((r) => setImmediate(r));
        pulledWhileHeld = counted.pulled();
      },
    });
    expect(parsed.type).toBe('PagesXMLSitemap');
    expect(pulledWhileHeld).toBeGreaterThanOrEqual(80 * 1024);
    expect(counted.pulled()).toBe(xml.length);
  });

  it('gives a worker a second document only when the first has waited a while for bytes', async () => {
    // A fast body still pauses between chunks for a turn or two of the event loop (a socket
    // resuming, the first bytes of a response). A worker that took the next document at such a
    // pause parsed two at a time, and the walk ended on a pair (issue 19).
    const xml = new TextEncoder().encode(urlset(2_000));
    const events: string[] = [];
    const turns = () => new Promise<void>((r) => setImmediate(() => setImmediate(r)));
    async function* paused() {
      for (let i = 0; i < xml.length; i += 16_384) {
        await turns();
        yield xml.subarray(i, i + 16_384);
      }
    }
    async function* second() {
      events.push('second document read');
      yield* chunked(xml);
    }
    const parser = pool({ workers: 1 });
    let firstPages = 0;
    const [a, b] = await Promise.all([
      parser.parse({
        url: 'https://example.com/a.xml',
        body: paused(),
        registry,
        onPages: (pages) => {
          firstPages += pages.length;
          if (firstPages === 2_000) events.push('first document parsed');
        },
      }),
      parser.parse({ url: 'https://example.com/b.xml', body: second(), registry }),
    ]);
    expect([a.pageCount, b.pageCount]).toEqual([2_000, 2_000]);
    expect(events).toEqual(['first document parsed', 'second document read']);
  });

  it('checks options before sending anything to a worker', async () => {
    const p = pool();
    await expect(
      p.parse({
        url: 'https://example.com/x.xml',
        body: chunked(new Uint8Array(10)),
        registry,
        limits: { nope: 1 } as never,
      }),
    ).rejects.toBeInstanceOf(InvalidOptionError);
    expect(() => createWorkerParser({ workers: 0 })).toThrow(InvalidOptionError);
    // A misspelt option is named, with the option it was probably meant to be.
    expect(() => createWorkerParser({ worker: 2 } as never)).toThrow(
      'Option worker: unknown option (did you mean workers?)',
    );
  });

  it('parses robots.txt and small documents in-thread with the caller registry', async () => {
    const p = createWorkerParser({ workerUrl });
    pools.push(p);
    const parsed = await p.parse({
      url: 'https://example.com/robots.txt',
      body: new TextEncoder().encode('User-agent: *\nDisallow: /x\nSitemap: https://example.com/s.xml\n'),
      registry,
    });
    expect(parsed.type).toBe('IndexRobotsTxtSitemap');
    expect(parsed.children.map((c) => c.url)).toEqual(['https://example.com/s.xml']);
  });

  it('spreads documents over the workers and parses them concurrently', async () => {
    const xml = new TextEncoder().encode(urlset(500));
    const p = pool({ workers: 2 });
    const results = await Promise.all([0, 1, 2, 3].map(() => collect(p.parse, () => chunked(xml))));
    for (const r of results) expect(r.pages.length).toBe(500);
  });
});

describe('createWorkerParser: one large document per thread', () => {
  // Gzipped bodies tell the threads apart: the caller's `gunzip` runs only for documents parsed
  // in the calling thread (workers use their own).
  const gz = gzipSync(new TextEncoder().encode(urlset(300)));
  function gate() {
    let open: () => void = () => {};
    const opened = new Promise<void>((r) => {
      open = r;
    });
    return { open, opened };
  }
  function job(p: WorkerParser, hold: Promise<void>, gunzips: string[], name: string) {
    const state = { pulled: false, pages: 0, blocked: gate() };
    const url = `https://example.com/${name}.xml.gz`;
    async function* body() {
      state.pulled = true;
      yield* chunked(gz, 1024);
    }
    const done = p.parse({
      url,
      body: body(),
      registry,
      gunzip: (input, max) => {
        gunzips.push(name);
        return nodeGunzip(input, max);
      },
      onPages: async (pages) => {
        state.pages += pages.length;
        state.blocked.open();
        await hold;
      },
    });
    return { state, done };
  }

  it('parses the first in the calling thread, the second on the worker, and holds the third unread', async () => {
    const p = pool({ workers: 1, callerThreadDocuments: 1 });
    const hold = gate();
    const gunzips: string[] = [];
    const a = job(p, hold.opened, gunzips, 'a');
    const b = job(p, hold.opened, gunzips, 'b');
    const c = job(p, hold.opened, gunzips, 'c');
    await Promise.all([a.state.blocked.opened, b.state.blocked.opened]);
    // Both threads are busy (each holds a batch): the third document has not been read at all.
    expect(c.state.pulled).toBe(false);
    expect(gunzips).toEqual(['a']);
    hold.open();
    const [ra, rb, rc] = await Promise.all([a.done, b.done, c.done]);
    for (const r of [ra, rb, rc]) expect(r.type).toBe('PagesXMLSitemap');
    expect([a.state.pages, b.state.pages, c.state.pages]).toEqual([300, 300, 300]);
    expect(c.state.pulled).toBe(true);
  });

  it('parses a waiting document at once, in-thread, when its signal aborts', async () => {
    const p = pool({ workers: 1 });
    const hold = gate();
    const gunzips: string[] = [];
    const a = job(p, hold.opened, gunzips, 'a');
    await a.state.blocked.opened;
    const ac = new AbortController();
    const waiting = p.parse({
      url: 'https://example.com/w.xml',
      body: chunked(gz),
      registry,
      signal: ac.signal,
    });
    ac.abort();
    const parsed = await waiting;
    // Core's handling of an aborted parse: nothing read, marked truncated with its warning.
    expect(parsed.truncated).toBe(true);
    expect(parsed.warnings.map((w) => w.code)).toContain('truncated');
    hold.open();
    expect((await a.done).type).toBe('PagesXMLSitemap');
  });

  it('rejects waiting documents when the pool closes', async () => {
    const p = createWorkerParser({ workerUrl, inlineBelowBytes: 0, workers: 1 });
    const hold = gate();
    const a = job(p, hold.opened, [], 'a');
    await a.state.blocked.opened;
    const waiting = p.parse({ url: 'https://example.com/w.xml', body: chunked(gz), registry });
    const closing = p.close();
    await expect(waiting).rejects.toThrow(/closed/);
    await expect(a.done).rejects.toThrow(/closed/);
    hold.open();
    await closing;
  });

  it('checks callerThreadDocuments', () => {
    expect(() => createWorkerParser({ callerThreadDocuments: -1 })).toThrow(InvalidOptionError);
    expect(() => createWorkerParser({ callerThreadDocuments: 1.5 })).toThrow(InvalidOptionError);
  });
});

describe.skipIf(!hasCorpus())('the conformance site cases through worker threads', () => {
  // Every document in a worker (nothing inline but robots.txt): the tree must not change.
  for (const info of loadCases({ kind: 'site' })) {
    it(`${info.name}: same tree as parsing in-thread`, async () => {
      const inThread = await runSiteCase(info.name);
      const inWorkers = await runSiteCase(info.name, { parse: pool({ workers: 2 }).parse });
      expect(withPortPlaceholder(inWorkers.json, inWorkers.port)).toEqual(
        withPortPlaceholder(inThread.json, inThread.port),
      );
      expect(inWorkers.warnings.map((w) => w.code).sort()).toEqual(
        inThread.warnings.map((w) => w.code).sort(),
      );
    });
  }
});

describe.skipIf(!hasCorpus())('the conformance document cases through a worker thread', () => {
  for (const info of loadCases({ kind: 'document' })) {
    it(`${info.name}: same document as parsing in-thread`, async () => {
      const c = readCase(info.name);
      const parse = async (
        p: (o: ParseDocumentOptions) => Promise<Awaited<ReturnType<typeof parseDocument>>>,
      ) => {
        const warnings: string[] = [];
        const writer = memoryPageStore().open('');
        const parsed = await p({
          url: c.meta.url ?? 'http://usp-local-dummy.local/',
          body: chunked(c.input ?? new Uint8Array(0), 7),
          registry,
          headers: headerLookup(c.meta.headers),
          onWarning: (w) => warnings.push(`${w.code} ${w.message}`),
          onPages: (pages) => {
            for (const page of pages) writer.append(page);
          },
        });
        const sitemap = sitemapFromDocument(parsed, { stored: writer.close() });
        return {
          view: documentView({ ...parsed, sitemap }),
          warnings,
          truncated: parsed.truncated,
          bytes: parsed.bytes,
        };
      };
      const inWorker = await parse(pool({ workers: 1 }).parse);
      expect(inWorker).toEqual(await parse(parseDocument));
    });
  }
});

describe('nodeGunzip', () => {
  it('caps the output and reports cut data as a gzip error after yielding what it had', async () => {
    const data = gzipSync(Buffer.alloc(300_000, 'a'));
    const read = async (input: Uint8Array, cap: number) => {
      let n = 0;
      try {
        for await (const c of nodeGunzip(chunked(input, 1000), cap)) n += c.length;
        return { n, error: null };
      } catch (e) {
        return { n, error: (e as { code?: string }).code };
      }
    };
    expect(await read(data, 1_000_000)).toEqual({ n: 300_000, error: null });
    expect(await read(data, 1000)).toEqual({ n: 1000, error: 'USP_TOO_LARGE' });
    const cut = await read(data.subarray(0, data.length - 20), 1_000_000);
    expect(cut.error).toBe('USP_DECODING');
  });
});
