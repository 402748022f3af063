import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateStoreError } from '@usp-ts/core';
import { stateStoreSuite } from '@usp-ts/state-store-testkit';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteStateStore } from '../src/sqlite-state-store.js';

const dir = mkdtempSync(join(tmpdir(), 'usp-state-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
let last = '';

stateStoreSuite('sqliteStateStore', {
  open: async () => {
    last = join(dir, `s${n++}.sqlite`);
    return sqliteStateStore(last);
  },
  reopen: async () => sqliteStateStore(last),
});

describe('sqliteStateStore on files it must not use', () => {
  it('refuses a file another connection holds, and leaves it working', async () => {
    const path = join(dir, 'held.sqlite');
    const first = sqliteStateStore(path);
    await first.saveSite({
      site: 'https://a.example/',
      walkedAt: 1,
      fullWalkAt: 1,
      probedAt: 1,
      lastmodTrust: 0,
      sitemaps: [],
    });
    const attempt = (() => {
      try {
        sqliteStateStore(path, { busyTimeoutMs: 10 });
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(attempt).toBeInstanceOf(StateStoreError);
    expect((attempt as StateStoreError).problem).toBe('locked');
    expect((await first.loadSite('https://a.example/'))?.walkedAt).toBe(1);
    await first.close();
  });

  it('refuses a file that is not SQLite, and leaves its bytes as they were', () => {
    const path = join(dir, 'garbage.sqlite');
    const bytes = 'this is not a database, but somebody cares about it\n'.repeat(200);
    writeFileSync(path, bytes);
    expect(() => sqliteStateStore(path)).toThrow(
      expect.objectContaining({ code: 'USP_STATE', problem: 'corrupt' }),
    );
    expect(readFileSync(path, 'utf8')).toBe(bytes);
  });

  it('refuses an SQLite database of something else, and adds nothing to it', () => {
    const path = join(dir, 'other.sqlite');
    const other = new Database(path);
    other.exec('CREATE TABLE orders (id INTEGER)');
    other.close();
    expect(() => sqliteStateStore(path)).toThrow(/not a usp batch state/);
    const again = new Database(path);
    const tables = again.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all();
    again.close();
    expect(tables).toEqual([{ name: 'orders' }]);
  });
});
