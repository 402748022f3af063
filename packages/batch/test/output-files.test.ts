import { closeSync, fdatasync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GroupSync } from '../src/output-files.js';

describe('GroupSync', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** A GroupSync over three real files that records the files each sync flushed. */
  const setUp = (fail?: (fd: number) => boolean) => {
    const dir = mkdtempSync(join(tmpdir(), 'usp-group-sync-'));
    dirs.push(dir);
    const fds = ['a', 'b', 'c'].map((n) => openSync(join(dir, n), 'w'));
    const synced: number[][] = [];
    let current: number[] = [];
    const sync = new GroupSync(fds, async (fd) => {
      current.push(fd);
      if (fail?.(fd)) throw new Error(`sync of ${fd} failed`);
    });
    const take = () => {
      synced.push(current.sort());
      current = [];
    };
    return {
      fds,
      sync,
      synced,
      take,
      close: () => {
        for (const fd of fds) closeSync(fd);
      },
    };
  };

  it('syncs every file first, then only the files written since the last sync began', async () => {
    const { fds, sync, synced, take, close } = setUp();
    const [a, b, c] = fds;
    sync.touch(a);
    await sync.upTo(sync.wrote());
    take();
    sync.touch(b);
    sync.touch(c);
    const two = sync.wrote();
    sync.touch(c);
    await sync.upTo(Math.max(two, sync.wrote()));
    take();
    // Nothing written since: nothing to flush.
    await sync.all();
    take();
    close();
    expect(synced).toEqual([[a, b, c].sort(), [b, c].sort(), []]);
  });

  it('syncs the files of a group one after another', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'usp-group-sync-'));
    dirs.push(dir);
    const fds = ['a', 'b', 'c'].map((n) => openSync(join(dir, n), 'w'));
    let active = 0;
    let most = 0;
    const order: number[] = [];
    const sync = new GroupSync(fds, async (fd) => {
      active++;
      most = Math.max(most, active);
      await new Promise<void>((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve())));
      order.push(fd);
      active--;
    });
    await sync.upTo(sync.wrote());
    for (const fd of fds) closeSync(fd);
    expect(order.sort()).toEqual([...fds].sort());
    expect(most).toBe(1);
  });

  it('the files of a sync that failed are synced again by the next one', async () => {
    let failing = true;
    const { fds, sync, synced, take, close } = setUp((fd) => failing && fd === fds[1]);
    await expect(sync.upTo(sync.wrote())).rejects.toThrow(/failed/);
    take();
    failing = false;
    await sync.upTo(sync.wrote());
    take();
    close();
    // The failed sync stopped at its failure; untouched since, every file of it is flushed again.
    expect(synced).toEqual([[fds[0], fds[1]].sort(), [...fds].sort()]);
  });
});
