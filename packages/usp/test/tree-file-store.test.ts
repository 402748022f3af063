import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  memoryPageStore,
  type Page,
  type PagesSitemap,
  PagesXMLSitemap,
  pageToJSON,
  SitemapDate,
  sitemapToJSON,
  sitemapTreeForHomepageWithClient,
} from '@usp-ts/core';
import { startTestServer } from '@usp-ts/test-server';
import { afterAll, describe, expect, it } from 'vitest';
import { stripUrl } from '../src/cli/output.js';
import { decodePage, encodePage, filePageStore } from '../src/pages/file-store.js';
import type { LineBuffers } from '../src/pages/records.js';
import { gzip, robots, sitemapIndex, TEXT, testClient, treeOptions, until, XML } from './tree-helpers.js';

const base = mkdtempSync(join(tmpdir(), 'usp-store-test-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const full: Page = {
  url: 'https://example.com/a?b=1&c=ü',
  priority: 0.55555,
  lastModified: new SitemapDate(Date.UTC(2024, 4, 6, 7, 8, 9), 120, 456),
  changeFrequency: 'weekly',
  newsStory: {
    title: 'Title "quoted"\nline',
    publishDate: new SitemapDate(Date.UTC(2024, 0, 1), null),
    publicationName: 'Paper',
    publicationLanguage: 'en',
    access: null,
    genres: ['Blog'],
    keywords: ['a', '', 'b'],
    stockTickers: [],
  },
  images: [
    { loc: 'https://example.com/i.png', caption: null, geoLocation: 'Here', title: 'T', license: null },
  ],
  alternates: [{ hreflang: 'x-default', href: 'https://example.com/' }],
  extensions: {
    thirdParty: [{ title: 'v', publicationDate: new SitemapDate(Date.UTC(2020, 1, 2), -300), tags: ['x'] }],
  } as unknown as Page['extensions'],
};

describe('page encoding', () => {
  it('round-trips every field, dates with their offset, "no zone" and microseconds', () => {
    const back = decodePage(encodePage(full));
    expect(pageToJSON(back)).toEqual(pageToJSON(full));
    expect(back.lastModified).toBeInstanceOf(SitemapDate);
    expect(back.lastModified?.toSourceString()).toBe('2024-05-06T09:08:09.000456+02:00');
    expect(back.newsStory?.publishDate?.hasZone).toBe(false);
    const video = (back.extensions as unknown as { thirdParty: { publicationDate: SitemapDate }[] })
      .thirdParty[0];
    expect(video.publicationDate).toBeInstanceOf(SitemapDate);
    expect(video.publicationDate.toSourceString()).toBe('2020-02-01T19:00:00-05:00');
  });

  it('round-trips a bare page and stays one line', () => {
    const bare: Page = {
      url: 'http://x.test/\u2028',
      priority: 0.5,
      lastModified: null,
      changeFrequency: null,
      newsStory: null,
      images: null,
      alternates: null,
    };
    const line = encodePage(bare);
    expect(line).not.toContain('\n');
    expect(decodePage(line)).toEqual(bare);
  });
});

describe('filePageStore', () => {
  it('writes pages to a temp file, reads them back, and removes the file on release', () => {
    const store = filePageStore({ dir: base, flushBytes: 100 });
    expect(store.dir).toBeNull();
    const writer = store.open('https://example.com/s.xml');
    const pages = Array.from({ length: 50 }, (_, i) => ({ ...full, url: `https://example.com/${i}` }));
    for (const p of pages) writer.append(p);
    const stored = writer.close();
    expect(stored.count).toBe(50);
    expect(store.dir).not.toBeNull();
    const files = readdirSync(store.dir!);
    expect(files).toHaveLength(1);
    expect(stored.load().map(pageToJSON)).toEqual(pages.map(pageToJSON));
    // A fresh array each time.
    expect(stored.load()).not.toBe(stored.load());
    const dir = store.dir!;
    stored.release?.();
    // The directory goes with its last file.
    expect(existsSync(dir)).toBe(false);
    expect(store.dir).toBeNull();
    expect(stored.load()).toEqual([]);
    store.dispose();
  });

  it('iterates a file in bounded chunks: lines longer than a chunk and characters across a cut come back whole', () => {
    const store = filePageStore({ dir: base, readChunkBytes: 64 });
    const writer = store.open('https://example.com/s.xml');
    const pages = Array.from({ length: 40 }, (_, i) => ({
      ...full,
      // Multi-byte characters at every offset, one page far longer than a chunk.
      url: `https://example.com/${'é'.repeat(i)}${'日'.repeat(i % 7)}${i === 17 ? 'x'.repeat(500) : ''}`,
    }));
    for (const p of pages) writer.append(p);
    const stored = writer.close();
    expect(stored.iterate).toBeDefined();
    expect([...(stored.iterate?.() ?? [])].map(pageToJSON)).toEqual(pages.map(pageToJSON));
    expect(stored.load().map(pageToJSON)).toEqual(pages.map(pageToJSON));
    // Reads as it goes: with the file emptied after the first page, no more pages come. A reader
    // that took the whole file at once would still hand out all forty.
    const it = stored.iterate?.()[Symbol.iterator]();
    expect(it?.next().value?.url).toBe(pages[0].url);
    truncateSync(join(store.dir!, readdirSync(store.dir!)[0]), 0);
    let more = 0;
    while (it?.next().done === false) more++;
    expect(more).toBeLessThan(3);
    store.dispose();
  });

  it('round-trips ordinary pages exactly, mixed with pages of every other kind, across chunk cuts', () => {
    const store = filePageStore({ dir: base, readChunkBytes: 40, flushBytes: 100 });
    const writer = store.open('https://example.com/s.xml');
    const frequencies = [null, 'always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never'] as const;
    const priorities = [0.5, 0, -0, 1, 0.1 + 0.2, 1e-7, Number.NaN, Number.POSITIVE_INFINITY];
    const pages: Page[] = Array.from({ length: 120 }, (_, i) => {
      const plain: Page = {
        url:
          i % 3 === 0
            ? `https://example.com/${'é'.repeat(i % 5)}日/${i}${i % 24 === 0 ? '\ud800' : ''}`
            : `https://example.com/p/${i}?q="x"\\`,
        priority: priorities[i % priorities.length],
        lastModified:
          i % 4 === 0
            ? null
            : new SitemapDate(
                Date.UTC(2024, 0, 1) + i * 61_001,
                i % 4 === 1 ? null : (i % 9) * 30 - 120,
                i % 1000,
              ),
        changeFrequency: frequencies[i % frequencies.length],
        newsStory: null,
        images: null,
        alternates: null,
      };
      return i % 10 === 7 ? { ...full, url: plain.url } : plain;
    });
    for (const p of pages) writer.append(p);
    const back = [...(writer.close().iterate?.() ?? [])];
    expect(back.map(pageToJSON)).toEqual(pages.map(pageToJSON));
    for (const [i, p] of back.entries()) {
      expect(Object.is(p.priority, pages[i].priority)).toBe(true);
      const d = p.lastModified;
      const want = pages[i].lastModified;
      expect(d === null ? null : [d.epochMs, d.offsetMinutes, d.microseconds]).toEqual(
        want === null ? null : [want.epochMs, want.offsetMinutes, want.microseconds],
      );
      if (d !== null) expect(d).toBeInstanceOf(SitemapDate);
    }
    store.dispose();
  });

  it("prints a file's URLs as tabtree lines from its bytes, as the page-by-page path prints them", () => {
    const store = filePageStore({ dir: base, readChunkBytes: 50, flushBytes: 70 });
    const writer = store.open('https://example.com/s.xml');
    const urls = [
      'https://example.com/',
      'https://example.com/a/b?c=d',
      'https://example.com',
      'https://other.example/x',
      'https://example.com/é/日本/😀',
      'https://example.com/\ud800/lone',
      `https://example.com/${'long/'.repeat(40)}`,
      `https://example.com/${'longer/'.repeat(60)}`,
      'relative/path',
    ];
    const pages: Page[] = urls.map((url, i) =>
      i % 3 === 1
        ? { ...full, url }
        : { ...full, url, newsStory: null, images: null, alternates: null, extensions: undefined },
    );
    for (const p of pages) writer.append(p);
    const stored = writer.close();
    expect(stored.urlLines).toBeDefined();
    for (const prefix of ['', 'https://example.com/', 'https://example.com']) {
      for (const indent of ['', '\t\t']) {
        const got = Buffer.concat([...(stored.urlLines?.({ indent, stripPrefix: prefix }) ?? [])]);
        const want = Buffer.from(urls.map((u) => `${indent}${stripUrl(u, prefix)}\n`).join(''));
        expect(got.toString()).toBe(want.toString());
        expect(got.equals(want)).toBe(true);
      }
    }
    // Pages not in a file of this store take the page-by-page path.
    expect(
      new PagesXMLSitemap({ url: 'https://example.com/s.xml', pages }).pageUrlLines({
        indent: '',
        stripPrefix: '',
      }),
    ).toBeNull();
    store.dispose();
  });

  it('fills the same buffer again for the next lines only when told the last ones are written out', () => {
    const store = filePageStore({ dir: base, readChunkBytes: 300, flushBytes: 70 });
    const writer = store.open('https://example.com/s.xml');
    const urls = Array.from({ length: 60 }, (_, i) => `https://example.com/page/${i}`);
    for (const url of urls) writer.append({ ...full, url, newsStory: null, images: null, alternates: null });
    const stored = writer.close();
    const want = urls.map((u) => `\t${u}\n`).join('');
    for (const written of [true, undefined]) {
      const chunks = stored.urlLines?.({ indent: '\t', stripPrefix: '' });
      const copies: string[] = [];
      // Small chunks come from Buffer's shared pool: a chunk's memory is its buffer and offset.
      const ids = new Map<ArrayBufferLike, number>();
      const places = new Set<string>();
      for (let r = chunks?.next(); r !== undefined && r.done !== true; r = chunks?.next(written)) {
        copies.push(Buffer.from(r.value).toString());
        if (!ids.has(r.value.buffer)) ids.set(r.value.buffer, ids.size);
        places.add(`${ids.get(r.value.buffer)}:${r.value.byteOffset}`);
      }
      expect(copies.length).toBeGreaterThan(3);
      expect(copies.join('')).toBe(want);
      expect(places.size).toBe(written ? 1 : copies.length);
    }
    store.dispose();
  });

  it('hands its buffers from one file to the next of a print (LineBuffers): nothing new a file', () => {
    const store = filePageStore({ dir: base, readChunkBytes: 300, flushBytes: 70 });
    const fileOf = (n: number) => {
      const writer = store.open(`https://example.com/s${n}.xml`);
      const urls = Array.from({ length: 40 }, (_, i) => `https://example.com/${n}/page/${i}`);
      for (const url of urls)
        writer.append({ ...full, url, newsStory: null, images: null, alternates: null });
      return {
        stored: writer.close(),
        want: urls.map((u) => `${u}\n`).join(''),
      };
    };
    const buffers: LineBuffers = {};
    const places = new Set<string>();
    const ids = new Map<ArrayBufferLike, number>();
    for (const { stored, want } of [fileOf(1), fileOf(2), fileOf(3)]) {
      const chunks = stored.urlLines?.({ indent: '', stripPrefix: '', scratch: buffers });
      let got = '';
      for (let r = chunks?.next(); r !== undefined && r.done !== true; r = chunks?.next(true)) {
        got += Buffer.from(r.value).toString();
        if (!ids.has(r.value.buffer)) ids.set(r.value.buffer, ids.size);
        places.add(`${ids.get(r.value.buffer)}:${r.value.byteOffset}`);
      }
      expect(got).toBe(want);
    }
    // Three files, several chunks each, one line buffer; and one read buffer kept between them.
    expect(places.size).toBe(1);
    expect(buffers.read).not.toBeNull();
    store.dispose();
  });

  it('creates no file for a sitemap without pages; dispose removes the directory', () => {
    const store = filePageStore({ dir: base });
    expect(store.open('u').close().load()).toEqual([]);
    expect(store.dir).toBeNull();
    const w = store.open('v');
    w.append(full);
    w.close();
    const dir = store.dir!;
    expect(existsSync(dir)).toBe(true);
    store.dispose();
    expect(existsSync(dir)).toBe(false);
  });

  it('leaves nothing behind when the process exits', () => {
    const dist = fileURLToPath(new URL('../dist/pages/file-store.js', import.meta.url));
    if (!existsSync(dist)) return expect.fail(`build the package first: ${dist} is missing`);
    const script = `
      import { filePageStore } from ${JSON.stringify(dist)};
      const store = filePageStore({ dir: ${JSON.stringify(base)} });
      const w = store.open('s');
      w.append({ url: 'http://x.test/', priority: 0.5, lastModified: null, changeFrequency: null,
                 newsStory: null, images: null, alternates: null });
      w.close();
      console.log(store.dir);`;
    const dir = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    }).trim();
    expect(dir.startsWith(base)).toBe(true);
    expect(existsSync(dir)).toBe(false);
  });

  it('gives the same tree as the memory store over HTTP, and leaves no file descriptor open', async () => {
    const fds = () => (existsSync('/proc/self/fd') ? readdirSync('/proc/self/fd').length : 0);
    const before = fds();
    const server = await startTestServer();
    const client = testClient();
    try {
      const o = server.origin;
      const urls = Array.from({ length: 3_000 }, (_, i) => `${o}/p/${i}`);
      const half = (from: number) =>
        `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">${urls
          .slice(from, from + 1_500)
          .map(
            (u, i) =>
              `<url><loc>${u}</loc><lastmod>2024-05-0${(i % 9) + 1}T10:00:00+01:00</lastmod><priority>0.${i % 10}</priority><news:news><news:publication><news:name>P</news:name><news:language>en</news:language></news:publication><news:publication_date>2024-05-01</news:publication_date><news:title>T${i}</news:title></news:news></url>`,
          )
          .join('')}</urlset>`;
      server.route('/robots.txt', { headers: TEXT, body: robots([`${o}/idx.xml`]) });
      server.route('/idx.xml', { headers: XML, body: sitemapIndex([`${o}/a.xml.gz`, `${o}/b.xml`]) });
      server.route('/a.xml.gz', { body: gzip(half(0)) });
      server.route('/b.xml', { headers: XML, body: half(1_500) });
      const store = filePageStore({ dir: base });
      const onFile = await sitemapTreeForHomepageWithClient(
        o,
        treeOptions(client, { pageStore: store, useKnownPaths: false }),
      );
      const inMemory = await sitemapTreeForHomepageWithClient(
        o,
        treeOptions(client, { pageStore: memoryPageStore(), useKnownPaths: false }),
      );
      expect(sitemapToJSON(onFile)).toEqual(sitemapToJSON(inMemory));
      expect([...onFile.allPages()]).toHaveLength(3_000);
      const dir = store.dir!;
      expect(readdirSync(dir)).toHaveLength(2);
      for (const s of onFile.allSitemaps()) if ('releasePages' in s) (s as PagesSitemap).releasePages();
      expect(existsSync(dir)).toBe(false);
      store.dispose();
    } finally {
      await client.close();
      await server.close();
    }
    // Temp files are closed as each sitemap ends; sockets close with the client and the server.
    await until(() => fds() <= before);
  });
});

describe('filePageStore temp directories', () => {
  const dist = fileURLToPath(new URL('../dist/pages/file-store.js', import.meta.url));
  const PAGE = `{ url: 'http://x.test/', priority: 0.5, lastModified: null, changeFrequency: null,
                  newsStory: null, images: null, alternates: null }`;
  const pagesDirs = (parent: string) => readdirSync(parent).filter((n) => n.startsWith('usp-pages-'));
  /** Runs an ES module in a fresh Node process; its stdout. */
  const runModule = (script: string, args: string[] = []) => {
    const r = spawnSync(process.execPath, [...args, '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    // A process killed on purpose has no status; any other failure is the test's.
    if (r.status !== 0 && r.signal === null) throw new Error(`exit ${r.status}: ${r.stderr}`);
    return r.stdout.trim();
  };

  it('removes the directory with its last file, and makes a new one for the next', () => {
    const store = filePageStore({ dir: base });
    const a = store.open('a');
    a.append(full);
    const storedA = a.close();
    const b = store.open('b');
    b.append(full);
    const storedB = b.close();
    const first = store.dir!;
    storedA.release?.();
    expect(readdirSync(first)).toHaveLength(1);
    storedB.release?.();
    expect(existsSync(first)).toBe(false);
    const c = store.open('c');
    c.append(full);
    const storedC = c.close();
    expect(store.dir).not.toBeNull();
    expect(store.dir).not.toBe(first);
    expect(storedC.load().map(pageToJSON)).toEqual([pageToJSON(full)]);
    store.dispose();
  });

  it('a tree dropped without releasing its pages leaves no directory once it is collected', () => {
    const parent = mkdtempSync(join(base, 'gc-'));
    if (!existsSync(dist)) return expect.fail(`build the package first: ${dist} is missing`);
    const script = `
      import { existsSync } from 'node:fs';
      import { filePageStore } from ${JSON.stringify(dist)};
      const store = filePageStore({ dir: ${JSON.stringify(parent)} });
      let stored = [];
      for (const name of ['a', 'b']) {
        const w = store.open(name);
        w.append(${PAGE});
        stored.push(w.close());
      }
      const dir = store.dir;
      stored = null;
      // The process stays alive: only the collector can remove the files and the directory.
      for (let i = 0; i < 500 && existsSync(dir); i++) {
        globalThis.gc();
        await new Promise((r) => setTimeout(r, 5));
      }
      console.log(existsSync(dir) ? 'left' : 'gone');`;
    expect(runModule(script, ['--expose-gc'])).toBe('gone');
    expect(pagesDirs(parent)).toEqual([]);
  });

  /** A worker script that stores a page under `parent`, says so, and then stays busy. */
  const workerScript = (parent: string) => {
    const file = join(mkdtempSync(join(base, 'script-')), 'worker.mjs');
    writeFileSync(
      file,
      `import { parentPort } from 'node:worker_threads';
      import { filePageStore } from ${JSON.stringify(dist)};
      const store = filePageStore({ dir: ${JSON.stringify(parent)} });
      const w = store.open('s');
      w.append(${PAGE});
      globalThis.kept = w.close();
      parentPort.postMessage('written');
      setInterval(() => {}, 1000);`,
    );
    return file;
  };
  const storeOnePage = (parent: string) => `
    const store = filePageStore({ dir: ${JSON.stringify(parent)} });
    const w = store.open('s');
    w.append(${PAGE});
    globalThis.kept = w.close();`;

  it.each([
    [
      'a process killed by a signal (no exit hook runs)',
      (parent: string) => `import { filePageStore } from ${JSON.stringify(dist)};
        ${storeOnePage(parent)}
        process.kill(process.pid, 'SIGKILL');`,
    ],
    [
      'a worker thread terminated by its process, which then exits normally',
      (parent: string) => `import { Worker } from 'node:worker_threads';
        const worker = new Worker(${JSON.stringify(workerScript(parent))}, { execArgv: [] });
        worker.once('message', () => worker.terminate());`,
    ],
  ])('%s leaves a directory that the next store on the host removes', (_what, script) => {
    const parent = mkdtempSync(join(base, 'dead-'));
    if (!existsSync(dist)) return expect.fail(`build the package first: ${dist} is missing`);
    runModule(script(parent));
    expect(pagesDirs(parent)).toHaveLength(1);
    // This process is alive: its own directory stays, the dead one goes.
    const store = filePageStore({ dir: parent });
    const w = store.open('s');
    w.append(full);
    const stored = w.close();
    expect(pagesDirs(parent)).toEqual([store.dir?.slice(parent.length + 1)]);
    stored.release?.();
    expect(pagesDirs(parent)).toEqual([]);
  });

  it('a worker thread terminated in a process whose main thread stored pages too: both go when it exits', () => {
    const parent = mkdtempSync(join(base, 'thread-'));
    if (!existsSync(dist)) return expect.fail(`build the package first: ${dist} is missing`);
    const out = runModule(`import { readdirSync } from 'node:fs';
      import { Worker } from 'node:worker_threads';
      import { filePageStore } from ${JSON.stringify(dist)};
      ${storeOnePage(parent)}
      const worker = new Worker(${JSON.stringify(workerScript(parent))}, { execArgv: [] });
      worker.once('message', async () => {
        await worker.terminate();
        console.log(readdirSync(${JSON.stringify(parent)}).length);
      });`);
    expect(out).toBe('2');
    expect(pagesDirs(parent)).toEqual([]);
  });
});
