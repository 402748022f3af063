import { hash } from 'node:crypto';
import { type Page, type PageWriter, pageToJSON, type StoredPages } from '@usp-ts/core';
import { ENTRY_BYTES, readDigest, writeDigest } from './page-digest.js';
import type { Change, ListedPageRow, PageRow } from './rows.js';

/** Characters of held lines turned into one Buffer. */
const HELD_PIECE_CHARS = 64 * 1024;

/** The first 8 bytes of SHA-1, as an 8-character latin1 string (a Map key that costs little). */
function hash8(text: string): string {
  return hash('sha1', text, 'binary').slice(0, 8);
}

/** Reads a stored digest into URL hash → row hash. */
function digestMap(digest: Uint8Array): Map<string, string> {
  const map = new Map<string, string>();
  const buf = readDigest(digest).entries;
  for (let i = 0; i + ENTRY_BYTES <= buf.length; i += ENTRY_BYTES) {
    map.set(buf.toString('latin1', i, i + 8), buf.toString('latin1', i + 8, i + 16));
  }
  return map;
}

export interface PageTrackerOptions {
  readonly site: string;
  /** The document's final URL. */
  readonly sitemap: string;
  /** Where rows go as they are decided, with their JSON text when marked (`SiteOutput.page`). */
  readonly emit: (row: PageRow, json?: string) => void;
  /** Mark rows with `change` against the stored digest (a state is in use). */
  readonly marking: boolean;
  /** The last run's digest and page count of this document, when there is one. */
  readonly previous: { readonly pages: Uint8Array | null; readonly pageCount: number } | null;
  /**
   * Emit every page, unchanged ones included (a full walk: its output is the whole site, marked);
   * otherwise a document whose pages are all unchanged emits nothing.
   */
  readonly emitUnchanged?: boolean;
}

/**
 * The page writer of one document of a site walk: turns pages into rows and, with a state, marks
 * each `new`, `changed` or `unchanged` against the last run. Rows are held back while every page
 * so far is unchanged: a document that ends with all pages unchanged and none gone emits nothing
 * (an unchanged sitemap, whatever its validators said); the first new or changed page releases
 * the held rows and the rest stream. With `emitUnchanged` (a full walk) every row streams, marked.
 */
export class PageTracker implements PageWriter, StoredPages {
  readonly #o: PageTrackerOptions;
  readonly #previous: Map<string, string> | null;
  /**
   * The unchanged rows held back, as their lines ('\n'-ended; whole lines in each 64 KiB Buffer),
   * off the JS heap: a run after a few pages were removed reads nearly every sitemap again and
   * holds each one's rows to its end, and held as objects they were most of its heap (peak RSS
   * 298 MiB against 186 for the fresh run, 1,000 sites). A released row is its line parsed again.
   */
  #held: Buffer[] | null;
  #heldText = '';
  #digest = new Uint8Array(0);
  /** `#digest` as a Buffer, made once per growth instead of once per page. */
  #view = Buffer.alloc(0);
  #count = 0;
  /** The pages' URLs, in order: kept in the digest so a page gone next time is named. */
  readonly #urls: string[] = [];
  #news = false;
  #change: Change = 'unchanged';

  readonly #prefix: string;

  constructor(options: PageTrackerOptions) {
    this.#o = options;
    this.#prefix = `{"site":${JSON.stringify(options.site)},"sitemap":${JSON.stringify(options.sitemap)},`;
    const prev = options.previous?.pages ?? null;
    this.#previous = options.marking && prev !== null ? digestMap(prev) : null;
    this.#held = options.marking && this.#previous !== null && options.emitUnchanged !== true ? [] : null;
    if (options.marking && this.#previous === null) this.#change = 'new';
  }

  get count(): number {
    return this.#count;
  }

  /** The document's final URL (the `sitemap` of its rows). */
  get sitemap(): string {
    return this.#o.sitemap;
  }

  /** The last run's digest of the document, `null` when there is none. */
  get previousPages(): Uint8Array | null {
    return this.#o.previous?.pages ?? null;
  }

  /** Whether any page carried a Google News story. */
  get news(): boolean {
    return this.#news;
  }

  /** How the document compares with the last run (final after `close()`). */
  get change(): Change {
    return this.#change;
  }

  /** The digest's entries (16 bytes a page, in order), a view: no URL text made. */
  get entries(): Buffer {
    return this.#view.subarray(0, this.#count * ENTRY_BYTES);
  }

  /** The pages' digest for the state (`SitemapState.pages`, layout 2 of `page-digest.ts`): a new array. */
  get digest(): Uint8Array {
    return writeDigest(this.#digest.subarray(0, this.#count * ENTRY_BYTES), this.#urls);
  }

  append(page: Page): void {
    const json = pageToJSON(page);
    if (page.newsStory !== null) this.#news = true;
    this.#count++;
    if (!this.#o.marking) {
      this.#o.emit({ site: this.#o.site, sitemap: this.#o.sitemap, ...json });
      return;
    }
    const urlHash = hash8(page.url);
    this.#urls.push(page.url);
    const text = JSON.stringify(json);
    const rowHash = hash8(text);
    this.#remember(urlHash, rowHash);
    let change: Change = 'new';
    if (this.#previous !== null) {
      const before = this.#previous.get(urlHash);
      change = before === undefined ? 'new' : before === rowHash ? 'unchanged' : 'changed';
    }
    // One object and one serialisation a page: this runs for every page of every site. The line is
    // JSON.stringify(marked) (the JSON form has no site, sitemap or change key), from the text the
    // hash needed anyway.
    const line = `${this.#prefix}${text.slice(1, -1)},"change":"${change}"}`;
    if (change !== 'unchanged' && this.#change === 'unchanged') this.#change = 'changed';
    if (this.#held !== null) {
      if (change === 'unchanged') {
        this.#heldText += `${line}\n`;
        if (this.#heldText.length >= HELD_PIECE_CHARS) this.#heldPiece();
        return;
      }
      this.#release();
    }
    const marked: ListedPageRow = { site: this.#o.site, sitemap: this.#o.sitemap, ...json, change };
    this.#o.emit(marked, line);
  }

  close(): StoredPages {
    // All pages unchanged: the document is unchanged unless pages are gone.
    const gone = this.#count !== (this.#o.previous?.pageCount ?? -1);
    if (this.#held !== null) {
      if (gone) this.#release();
      else {
        this.#held = null;
        this.#heldText = '';
      }
    } else if (this.#o.marking && gone && this.#change === 'unchanged') this.#change = 'changed';
    // The tracker is what the walk hands back with the document (`WalkedDocument.stored`).
    return this;
  }

  /** The pages went to the rows, not to the node: it has none to give back. */
  load(): Page[] {
    return [];
  }

  #heldPiece(): void {
    if (this.#heldText !== '') this.#held?.push(Buffer.from(this.#heldText));
    this.#heldText = '';
  }

  #release(): void {
    this.#heldPiece();
    const held = this.#held ?? [];
    this.#held = null;
    this.#change = 'changed';
    for (const piece of held) {
      const lines = piece.toString('utf8').split('\n');
      lines.pop();
      for (const line of lines) this.#o.emit(JSON.parse(line) as ListedPageRow, line);
    }
  }

  #remember(urlHash: string, rowHash: string): void {
    const at = (this.#count - 1) * ENTRY_BYTES;
    if (at + ENTRY_BYTES > this.#digest.length) {
      const grown = new Uint8Array(Math.max(256, this.#digest.length * 2));
      grown.set(this.#digest);
      this.#digest = grown;
      this.#view = Buffer.from(grown.buffer, grown.byteOffset, grown.byteLength);
    }
    this.#view.write(urlHash, at, 8, 'latin1');
    this.#view.write(rowHash, at + 8, 8, 'latin1');
  }
}
