import type * as fs from 'node:fs';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunMark } from '@usp-ts/core';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { memoryStateStore } from '../src/memory-state-store.js';
import { openNdjsonSink } from '../src/ndjson-sink.js';
import { OutputError } from '../src/output-error.js';
import type { PageRow, SiteResult } from '../src/rows.js';

// `write` may take fewer bytes than it is given (a file system filling up takes what fits, then
// answers ENOSPC). Injected here: writes under `disk.dir` get at most `disk.perWrite` bytes each,
// and fail with ENOSPC once `disk.left` is spent.
const disk = { dir: '', left: Number.POSITIVE_INFINITY, perWrite: Number.POSITIVE_INFINITY };
const onDisk = new Set<number>();
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return {
    ...real,
    openSync: (path: fs.PathLike, ...rest: unknown[]) => {
      const fd = (real.openSync as (...a: unknown[]) => number)(path, ...rest);
      if (disk.dir !== '' && String(path).startsWith(disk.dir)) onDisk.add(fd);
      else onDisk.delete(fd);
      return fd;
    },
    writeSync: (fd: number, data: Uint8Array | string, ...rest: unknown[]) => {
      const write = real.writeSync as (...a: unknown[]) => number;
      if (!onDisk.has(fd) || typeof data === 'string') return write(fd, data, ...rest);
      const offset = (rest[0] as number | undefined) ?? 0;
      const length = (rest[1] as number | undefined) ?? data.length - offset;
      if (disk.left <= 0) {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }
      const n = Math.min(length, disk.left, disk.perWrite);
      disk.left -= n;
      return write(fd, data, offset, n, rest[2]);
    },
  };
});

const root = mkdtempSync(join(tmpdir(), 'usp-short-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => {
  disk.left = Number.POSITIVE_INFINITY;
  disk.perWrite = Number.POSITIVE_INFINITY;
});
let n = 0;
const fresh = () => {
  const dir = join(root, `o${n++}`);
  disk.dir = dir;
  return dir;
};

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
  ({ site, sitemap: `${site}s.xml`, url: `${site}p${i}`, pad: 'x'.repeat(100) }) as unknown as PageRow;
const urls = (dir: string) =>
  readFileSync(join(dir, 'pages.ndjson'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { url: string }).url);
const expected = (site: string, count: number) => Array.from({ length: count }, (_, i) => `${site}p${i}`);

describe('openNdjsonSink with short writes', () => {
  it('writes every byte when each write takes only a few', async () => {
    const dir = fresh();
    disk.perWrite = 7;
    const sink = await openNdjsonSink({ dir, holdRows: 5 });
    const out = sink.begin('https://a.example/');
    for (let i = 0; i < 20; i++) out.page(page('https://a.example/', i));
    await out.commit(result('https://a.example/', 20));
    await sink.close();
    expect(urls(dir)).toEqual(expected('https://a.example/', 20));
  });

  it('on a full disk saves no state past the bytes written, stops, and a resume writes each site once', async () => {
    const dir = fresh();
    const state = memoryStateStore();
    const saved: string[] = [];
    const saveState = (mark: RunMark) => {
      // The mark a state keeps must never point past what the files hold.
      expect(statSync(join(dir, 'pages.ndjson')).size).toBeGreaterThanOrEqual(mark.offsets.pages);
      saved.push(mark.site);
      return Promise.resolve();
    };
    const sink = await openNdjsonSink({ dir, state });
    const a = sink.begin('https://a.example/');
    for (let i = 0; i < 10; i++) a.page(page('https://a.example/', i));
    await a.commit(result('https://a.example/', 10), saveState);
    disk.left = 500; // site b's pages get a short write, then ENOSPC
    const b = sink.begin('https://b.example/');
    for (let i = 0; i < 10; i++) b.page(page('https://b.example/', i));
    const failure = await b.commit(result('https://b.example/', 10), saveState).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OutputError);
    expect((failure as OutputError).message).toMatch(/^no space left on the device of /);
    const c = sink.begin('https://c.example/');
    c.page(page('https://c.example/', 0));
    await expect(c.commit(result('https://c.example/', 1), saveState)).rejects.toBe(failure);
    expect(saved).toEqual(['https://a.example/']);
    await sink.close();

    disk.left = Number.POSITIVE_INFINITY; // space freed
    const again = await openNdjsonSink({ dir, state, resume: true });
    expect([...again.done]).toEqual(['https://a.example/']);
    for (const site of ['https://b.example/', 'https://c.example/']) {
      const o = again.begin(site);
      for (let i = 0; i < 10; i++) o.page(page(site, i));
      await o.commit(result(site, 10), saveState);
    }
    await again.close();
    expect(urls(dir)).toEqual([
      ...expected('https://a.example/', 10),
      ...expected('https://b.example/', 10),
      ...expected('https://c.example/', 10),
    ]);
  });

  it('stops at commit when a site spilled to a temp file on a full disk', async () => {
    const dir = fresh();
    const sink = await openNdjsonSink({ dir, holdRows: 2 });
    disk.left = 150;
    const a = sink.begin('https://a.example/');
    for (let i = 0; i < 10; i++) a.page(page('https://a.example/', i));
    await expect(a.commit(result('https://a.example/', 10))).rejects.toThrow(/no space left/);
    await sink.close();
  });
});
