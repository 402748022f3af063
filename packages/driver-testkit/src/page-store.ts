import { newPageDraft, type Page, type PageStore, pageToJSON } from '@usp-ts/core';
import { afterEach, describe, expect, it } from 'vitest';

/** How the suite gets a page store. */
export interface PageStoreFactory {
  /** A new store. */
  open(): Promise<PageStore> | PageStore;
  /** Whether it gives pages back (`load`); a counting store keeps none. Default `true`. */
  readonly keepsPages?: boolean;
  /** Releases what the store holds (temp files); omit when there is nothing to release. */
  close?(store: PageStore): Promise<void> | void;
}

function page(sitemap: string, n: number): Page {
  const draft = newPageDraft(`${sitemap}#p${n}`);
  draft.priority = (n % 10) / 10;
  if (n % 3 === 0) {
    draft.images = [
      { loc: `${sitemap}#img${n}`, caption: `caption ${n} ✓`, geoLocation: null, title: null, license: null },
    ];
  }
  return draft;
}

const json = (pages: readonly Page[]) => pages.map((p) => pageToJSON(p));

/**
 * The contract of `PageStore` (`@usp-ts/core`), as every store must keep it: a writer per
 * sitemap, its pages given back in order and whole (`load`, `iterate`), `appendPages` the same as
 * `append` page by page, writers apart from one another, `release` freeing them. Call it at the
 * top level of a test file.
 */
export function pageStoreSuite(name: string, factory: PageStoreFactory): void {
  const keeps = factory.keepsPages !== false;
  describe(`page store contract: ${name}`, () => {
    const opened: PageStore[] = [];
    const open = async () => {
      const store = await factory.open();
      opened.push(store);
      return store;
    };
    afterEach(async () => {
      for (const s of opened.splice(0)) await factory.close?.(s);
    });

    it('counts the pages of a sitemap and gives them back in order, field for field', async () => {
      const store = await open();
      const url = 'https://a.example/s.xml';
      const pages = Array.from({ length: 250 }, (_, i) => page(url, i));
      const writer = store.open(url);
      for (const p of pages) writer.append(p);
      const stored = writer.close();
      expect(stored.count).toBe(250);
      expect(json(stored.load())).toEqual(keeps ? json(pages) : []);
    });

    it('takes a batch with appendPages as it takes the same pages one by one', async () => {
      const store = await open();
      const url = 'https://a.example/batch.xml';
      const pages = Array.from({ length: 40 }, (_, i) => page(url, i));
      const writer = store.open(url);
      if (writer.appendPages === undefined) {
        for (const p of pages) writer.append(p);
      } else {
        writer.appendPages(pages.slice(0, 15));
        for (const p of pages.slice(15, 20)) writer.append(p);
        writer.appendPages(pages.slice(20));
      }
      const stored = writer.close();
      expect(stored.count).toBe(40);
      expect(json(stored.load())).toEqual(keeps ? json(pages) : []);
    });

    it('keeps the writers of sitemaps read at the same time apart', async () => {
      const store = await open();
      const a = store.open('https://a.example/a.xml');
      const b = store.open('https://a.example/b.xml');
      const pa = Array.from({ length: 30 }, (_, i) => page('https://a.example/a.xml', i));
      const pb = Array.from({ length: 20 }, (_, i) => page('https://a.example/b.xml', i));
      for (let i = 0; i < 30; i++) {
        a.append(pa[i]);
        if (i < 20) b.append(pb[i]);
      }
      const sb = b.close();
      const sa = a.close();
      expect([sa.count, sb.count]).toEqual([30, 20]);
      expect(json(sa.load())).toEqual(keeps ? json(pa) : []);
      expect(json(sb.load())).toEqual(keeps ? json(pb) : []);
    });

    it('hands out a fresh array each load, and iterate gives the same pages', async () => {
      const store = await open();
      const url = 'https://a.example/fresh.xml';
      const writer = store.open(url);
      for (let i = 0; i < 5; i++) writer.append(page(url, i));
      const stored = writer.close();
      const first = stored.load();
      first.length = 0;
      expect(stored.load()).toHaveLength(keeps ? 5 : 0);
      if (stored.iterate !== undefined) expect(json([...stored.iterate()])).toEqual(json(stored.load()));
    });

    it('gives nothing back once released', async () => {
      const store = await open();
      const url = 'https://a.example/released.xml';
      const writer = store.open(url);
      for (let i = 0; i < 5; i++) writer.append(page(url, i));
      const stored = writer.close();
      if (stored.release === undefined) return;
      stored.release();
      expect(stored.load()).toEqual([]);
    });

    it('keeps an empty sitemap as no pages', async () => {
      const store = await open();
      const stored = store.open('https://a.example/empty.xml').close();
      expect(stored.count).toBe(0);
      expect(stored.load()).toEqual([]);
    });
  });
}
