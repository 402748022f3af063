import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { memoryStateStore } from '../src/memory-state-store.js';
import { openNdjsonSink } from '../src/ndjson-sink.js';
import type { PageRow, SitemapRow, SiteResult } from '../src/rows.js';
import { readJournal } from '../src/run-journal.js';
import type { RunMark } from '../src/state-store.js';
import { planDrop } from '../src/void-copies.js';

const root = mkdtempSync(join(tmpdir(), 'usp-sink-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(root, `o${n++}`);

const result = (site: string, pages: number): SiteResult => ({
  site,
  status: 'ok',
  reason: null,
  pages,
  sitemaps: 1,
  requests: 1,
  notModified: 0,
  skipped: 0,
  bytes: 0,
  ms: 0,
});
const page = (site: string, i: number) =>
  ({ site, sitemap: `${site}s.xml`, url: `${site}p${i}` }) as unknown as PageRow;
const lines = (path: string) =>
  (path.endsWith('.gz') ? gunzipSync(readFileSync(path)).toString() : readFileSync(path, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));

async function commitSite(sink: Awaited<ReturnType<typeof openNdjsonSink>>, site: string, pages: number) {
  const out = sink.begin(site);
  for (let i = 0; i < pages; i++) out.page(page(site, i));
  await out.commit(result(site, pages));
}

describe('openNdjsonSink', () => {
  it('keeps a site only when committed; a discarded one leaves nothing, a large one spills and comes back whole', async () => {
    const dir = fresh();
    const sink = await openNdjsonSink({ dir, holdRows: 3 });
    const dropped = sink.begin('https://d.example/');
    dropped.page(page('https://d.example/', 0));
    dropped.discard();
    await commitSite(sink, 'https://a.example/', 10);
    await sink.close();
    expect(lines(join(dir, 'pages.ndjson')).map((p) => p.url)).toEqual(
      Array.from({ length: 10 }, (_, i) => `https://a.example/p${i}`),
    );
    expect(lines(join(dir, 'sites.ndjson')).map((s) => s.site)).toEqual(['https://a.example/']);
  });

  it("reuses a spilled site's temp file for the next, reading back only the new site's bytes", async () => {
    const dir = fresh();
    const sink = await openNdjsonSink({ dir, holdRows: 3 });
    const partial = join(dir, '.partial');
    await commitSite(sink, 'https://a.example/', 40);
    expect(readdirSync(partial)).toHaveLength(1);
    // Shorter than the first: what the first left past its end must not come back.
    await commitSite(sink, 'https://b.example/', 7);
    // Two at once take two files; a dropped one gives its file back.
    const c = sink.begin('https://c.example/');
    const d = sink.begin('https://d.example/');
    for (let i = 0; i < 5; i++) c.page(page('https://c.example/', i));
    for (let i = 0; i < 5; i++) d.page(page('https://d.example/', i));
    c.discard();
    const e = sink.begin('https://e.example/');
    for (let i = 0; i < 4; i++) e.page(page('https://e.example/', i));
    await d.commit(result('https://d.example/', 5));
    await e.commit(result('https://e.example/', 4));
    expect(readdirSync(partial)).toHaveLength(2);
    await sink.close();
    expect(existsSync(partial)).toBe(false);
    const urls = (site: string, count: number) => Array.from({ length: count }, (_, i) => `${site}p${i}`);
    expect(lines(join(dir, 'pages.ndjson')).map((p) => p.url)).toEqual([
      ...urls('https://a.example/', 40),
      ...urls('https://b.example/', 7),
      ...urls('https://d.example/', 5),
      ...urls('https://e.example/', 4),
    ]);
  });

  it("writes a site's page lines byte for byte, given text or rows, across many held pieces", async () => {
    const dir = fresh();
    // In memory (no spill), and with lines of several hundred characters: many 64 K pieces a site.
    const sink = await openNdjsonSink({ dir, holdRows: 10_000 });
    const out = sink.begin('https://a.example/');
    const expected: string[] = [];
    for (let i = 0; i < 2_000; i++) {
      const row = {
        ...page('https://a.example/', i),
        note: `\u00e9${'x'.repeat(i % 300)}`,
      } as unknown as PageRow;
      const text = JSON.stringify(row);
      expected.push(text);
      // The page tracker hands its rows' text; other callers the row alone.
      if (i % 2 === 0) out.page(row, text);
      else out.page(row);
    }
    await out.commit(result('https://a.example/', 2_000));
    await sink.close();
    expect(readFileSync(join(dir, 'pages.ndjson'), 'utf8')).toBe(`${expected.join('\n')}\n`);
  });

  it('on resume cuts output past the last journal line and a torn journal line, and knows what is done', async () => {
    const dir = fresh();
    const sink = await openNdjsonSink({ dir, gzip: true });
    await commitSite(sink, 'https://a.example/', 2);
    await commitSite(sink, 'https://b.example/', 3);
    await sink.close();
    // What a kill between a site's lines and its journal line leaves: lines without a journal entry.
    appendFileSync(join(dir, 'pages.ndjson.gz'), Buffer.from('garbage of a site never committed'));
    appendFileSync(join(dir, 'journal.ndjson'), '{"type":"site","site":"https://c.exa');
    const again = await openNdjsonSink({ dir, resume: true });
    expect([...again.done].sort()).toEqual(['https://a.example/', 'https://b.example/']);
    await commitSite(again, 'https://c.example/', 1);
    await again.close();
    expect(lines(join(dir, 'pages.ndjson.gz')).map((p) => p.url)).toEqual([
      'https://a.example/p0',
      'https://a.example/p1',
      'https://b.example/p0',
      'https://b.example/p1',
      'https://b.example/p2',
      'https://c.example/p0',
    ]);
    expect(lines(join(dir, 'journal.ndjson')).filter((l) => l.type === 'site')).toHaveLength(3);
  });

  it('counts as done a site whose state was saved just before the kill, keeping its lines once', async () => {
    const dir = fresh();
    const state = memoryStateStore();
    const sink = await openNdjsonSink({ dir, state });
    await commitSite(sink, 'https://a.example/', 1);
    // The state transaction of site b ran (its mark holds the offsets after its lines), the journal line did not.
    const out = sink.begin('https://b.example/');
    out.page(page('https://b.example/', 0));
    let mark: RunMark | null = null;
    await out.commit(result('https://b.example/', 1), {
      saveState: async (m) => {
        mark = m;
        await state.saveSite(
          {
            site: 'https://b.example/',
            walkedAt: 0,
            fullWalkAt: 0,
            probedAt: 0,
            lastmodTrust: 0,
            unreachable: null,
            sitemaps: [],
          },
          m,
        );
      },
    });
    await sink.close();
    const journal = join(dir, 'journal.ndjson');
    const text = readFileSync(journal, 'utf8').split('\n');
    // Drop b's journal line, as a kill right after the state transaction would have.
    writeFileSync(journal, `${text.filter((l) => !l.includes('https://b.example/')).join('\n')}`);
    expect(mark).not.toBeNull();
    const again = await openNdjsonSink({ dir, resume: true, state });
    expect([...again.done].sort()).toEqual(['https://a.example/', 'https://b.example/']);
    await again.close();
    expect(lines(join(dir, 'pages.ndjson')).map((p) => p.url)).toEqual([
      'https://a.example/p0',
      'https://b.example/p0',
    ]);
  });

  it('cuts out void copies of queue jobs on resume and on close, keeping the other sites in order', async () => {
    for (const gzip of [false, true]) {
      const dir = fresh();
      const ext = gzip ? '.ndjson.gz' : '.ndjson';
      const tagged = async (
        sink: Awaited<ReturnType<typeof openNdjsonSink>>,
        site: string,
        n: number,
        token?: string,
      ) => {
        const out = sink.begin(site);
        for (let i = 0; i < n; i++) out.page(page(site, i));
        out.sitemap({ site, url: `${site}s.xml` } as unknown as SitemapRow);
        await out.commit(
          result(site, n),
          token === undefined ? undefined : { fence: async () => ({ token, voids: [] }) },
        );
      };
      const voided = new Set<string>();
      const asked: string[][] = [];
      const dropped: string[] = [];
      const options = {
        dir,
        gzip,
        voidedCopies: async (tokens: readonly string[]) => {
          asked.push([...tokens]);
          return voided;
        },
        onDropped: (sites: readonly string[]) => dropped.push(...sites),
      };
      const sink = await openNdjsonSink(options);
      await tagged(sink, 'https://a.example/', 2, 't-a');
      await tagged(sink, 'https://b.example/', 3, 't-b');
      await tagged(sink, 'https://c.example/', 1, 't-c');
      await tagged(sink, 'https://d.example/', 2);
      await tagged(sink, 'https://e.example/', 2, 't-e');
      // b and e were walked again by another worker after they were written here.
      voided.add('t-b');
      voided.add('t-e');
      await sink.close();
      expect(asked).toEqual([['t-a', 't-b', 't-c', 't-e']]);
      expect(dropped).toEqual(['https://b.example/', 'https://e.example/']);
      const urls = () => lines(join(dir, `pages${ext}`)).map((p) => p.url);
      expect(urls()).toEqual([
        'https://a.example/p0',
        'https://a.example/p1',
        'https://c.example/p0',
        'https://d.example/p0',
        'https://d.example/p1',
      ]);
      expect(lines(join(dir, `sites${ext}`)).map((r) => r.site)).toEqual([
        'https://a.example/',
        'https://c.example/',
        'https://d.example/',
      ]);
      expect(lines(join(dir, 'journal.ndjson')).map((l) => l.token ?? l.type)).toEqual([
        'run',
        't-a',
        't-c',
        'site',
      ]);

      // A copy found void only at the restart (the worker was killed): cut before going on.
      const again = await openNdjsonSink({ ...options, resume: true });
      await tagged(again, 'https://f.example/', 1, 't-f');
      appendFileSync(join(dir, `pages${ext}`), Buffer.from('torn lines of a site never committed'));
      voided.add('t-a');
      await again.close();
      dropped.length = 0;
      const third = await openNdjsonSink({ ...options, resume: true });
      expect([...third.done].sort()).toEqual([
        'https://c.example/',
        'https://d.example/',
        'https://f.example/',
      ]);
      await tagged(third, 'https://g.example/', 1, 't-g');
      await third.close();
      expect(urls()).toEqual([
        'https://c.example/p0',
        'https://d.example/p0',
        'https://d.example/p1',
        'https://f.example/p0',
        'https://g.example/p0',
      ]);
      expect(lines(join(dir, `sitemaps${ext}`)).map((r) => r.site)).toEqual(
        ['c', 'd', 'f', 'g'].map((x) => `https://${x}.example/`),
      );
      // The journal's offsets still end where the files end.
      const last = lines(join(dir, 'journal.ndjson')).at(-1);
      expect(last.offsets.pages).toBe(readFileSync(join(dir, `pages${ext}`)).length);
      expect(last.offsets.sites).toBe(readFileSync(join(dir, `sites${ext}`)).length);
    }
  });

  it('finishes a drop of void copies that a kill interrupted, losing nothing it was to keep', async () => {
    const dir = fresh();
    const sink = await openNdjsonSink({ dir });
    for (const [site, token] of [
      ['https://a.example/', 't-a'],
      ['https://b.example/', 't-b'],
      ['https://c.example/', 't-c'],
    ]) {
      const out = sink.begin(site);
      for (let i = 0; i < 3; i++) out.page(page(site, i));
      await out.commit(result(site, 3), { fence: async () => ({ token, voids: [] }) });
    }
    await sink.close();
    const files = {
      dir,
      journal: join(dir, 'journal.ndjson'),
      outputs: Object.fromEntries(['pages', 'sitemaps', 'sites'].map((f) => [f, join(dir, `${f}.ndjson`)])),
    };
    const planned = planDrop(files, readJournal(files.journal)!, new Set(['t-b']));
    expect(planned?.dropped).toEqual(['https://b.example/']);
    // Killed while applying the plan: pages.ndjson already cut, c's lines not yet put back.
    truncateSync(join(dir, 'pages.ndjson'), planned!.plan.cut.pages);
    const again = await openNdjsonSink({ dir, resume: true });
    expect([...again.done].sort()).toEqual(['https://a.example/', 'https://c.example/']);
    await again.close();
    expect(lines(join(dir, 'pages.ndjson')).map((p) => p.url)).toEqual(
      ['a', 'c'].flatMap((x) => [0, 1, 2].map((i) => `https://${x}.example/p${i}`)),
    );
    expect(lines(join(dir, 'sites.ndjson')).map((r) => r.site)).toEqual([
      'https://a.example/',
      'https://c.example/',
    ]);
    expect(existsSync(join(dir, '.dropping'))).toBe(false);
  });

  it('refuses a directory holding a run unless resuming, and a resume with the other --gzip', async () => {
    const dir = fresh();
    await (await openNdjsonSink({ dir })).close();
    await expect(openNdjsonSink({ dir })).rejects.toMatchObject({ code: 'USP_OUTPUT' });
    await expect(openNdjsonSink({ dir, resume: true, gzip: true })).rejects.toThrow(/--gzip/);
  });
});
