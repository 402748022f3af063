import {
  type Page,
  type PageJSON,
  type PageWriter,
  pageToJSON,
  plainPageDate,
  plainPageFields,
  type StoredPages,
} from '@usp-ts/core';
import { digestOf, digestParts, frontCoded } from './page-digest.js';
import { DigestTable, EntryWords, LANES, plainRowHash, sha1Hash, textRowHash, urlHash } from './page-hash.js';
import type { Change, ListedPageRow, PageRow } from './rows.js';
import { TextPieces } from './text-pieces.js';

const NO_BYTES = new Uint8Array(0);

/** The end of a row's line for each mark: one string added a page rather than three. */
const CHANGE_TAIL: Readonly<Record<Change, string>> = {
  new: ',"change":"new"}',
  changed: ',"change":"changed"}',
  unchanged: ',"change":"unchanged"}',
  removed: ',"change":"removed"}',
};

/** Characters of held lines turned into one Buffer. */
const HELD_PIECE_CHARS = 64 * 1024;

/** Characters a digest part gathers as text before it becomes bytes (small: see held-rows.ts). */
const DIGEST_PIECES = { pieceChars: 4 * 1024, chunkBytes: 16 * 1024 } as const;

export interface PageTrackerOptions {
  readonly site: string;
  /** The document's final URL. */
  readonly sitemap: string;
  /** Where rows go as they are decided, with their JSON text when marked (`SiteOutput.page`). */
  readonly emit: (row: PageRow, json?: string) => void;
  /**
   * Where marked rows go as their JSON text alone, when the output takes them so
   * (`SiteOutput.pageLine`): then no row object is made for them, and a held row is not parsed
   * back into one. Without it, every row goes to `emit`.
   */
  readonly emitLine?: (json: string) => void;
  /**
   * Where held rows go as their lines in bulk (`SiteOutput.pageLines`: UTF-8, each ended by
   * '\n', and how many), when the output takes them so; otherwise they go line by line.
   */
  readonly emitLines?: (text: Buffer, rows: number) => void;
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
  /** The last run's entries by URL hash, when marking against a stored digest. */
  readonly #previous: DigestTable | null;
  /**
   * The last digest is of layout 1 or 2: pages are compared by SHA-1 (as that usp wrote them) and
   * their SHA-1 entries kept here, for a cut document (`cutDocumentState`); the digest is still layout 4.
   */
  readonly #sha1: EntryWords | null;
  /**
   * The unchanged rows held back, as their lines ('\n'-ended; whole lines in each 64 KiB Buffer),
   * off the JS heap: a run after a few pages were removed reads nearly every sitemap again and
   * holds each one's rows to its end, and held as objects they were most of its heap (peak RSS
   * 298 MiB against 186 for the fresh run, 1,000 sites). A released row goes on as its line to an
   * output that takes lines (`emitLine`), and is its line parsed again only for one that does not.
   */
  #held: { readonly text: Buffer; readonly rows: number }[] | null;
  #heldText = '';
  #heldRows = 0;
  /** The digest's entries (layout 4): each page's URL hash and row hash, two lanes each. */
  readonly #entries = new EntryWords();
  /**
   * The pages' URLs, in order, front-coded (layout 4): kept in the digest so a page gone next time
   * is named.
   */
  readonly #urls = new TextPieces('utf8', { ...DIGEST_PIECES, separator: '\n' });
  /** The last URL added to `#urls`. */
  #lastUrl = '';
  #count = 0;
  #news = false;
  #change: Change = 'unchanged';
  #closed = false;
  #closedDigest: Uint8Array | null = null;

  readonly #prefix: string;

  constructor(options: PageTrackerOptions) {
    this.#o = options;
    this.#prefix = `{"site":${JSON.stringify(options.site)},"sitemap":${JSON.stringify(options.sitemap)},`;
    const prev = options.previous?.pages ?? null;
    const stored = options.marking && prev !== null ? digestParts(prev) : null;
    this.#previous = stored === null ? null : new DigestTable(stored.entries);
    this.#sha1 = stored !== null && stored.version < 3 ? new EntryWords() : null;
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

  /**
   * The pages' digest for the state (`SitemapState.pages`, layout 4 of `page-digest.ts`): a new
   * array while the document is open, the same one at every read once it is closed.
   */
  get digest(): Uint8Array {
    if (this.#closedDigest !== null) return this.#closedDigest;
    const digest = this.#o.marking
      ? digestOf(4, this.#entries.bytes(), this.#urls.bytes(), this.#count)
      : digestOf(4, NO_BYTES, NO_BYTES, 0);
    // The walk's tree keeps the tracker (`WalkedDocument.stored`) until the site ends: once the
    // document is closed its digest is made once, and the pieces it was made from go.
    if (this.#closed) {
      this.#closedDigest = digest;
      this.#entries.clear();
      this.#urls.clear();
      this.#lastUrl = '';
    }
    return digest;
  }

  append(page: Page): void {
    if (page.newsStory !== null) this.#news = true;
    this.#count++;
    const o = this.#o;
    if (!o.marking) {
      o.emit({ site: o.site, sitemap: o.sitemap, ...pageToJSON(page) });
      return;
    }
    // A plain page's row is made field by field; any other from its JSON form.
    const lm = plainPageDate(page);
    const json = lm === undefined ? pageToJSON(page) : null;
    const url = page.url;
    this.#urls.add(frontCoded(this.#lastUrl, url));
    this.#lastUrl = url;
    // The row's text (`null` for a plain page: its hash takes its fields), and that text between
    // its braces.
    const text = lm === undefined ? JSON.stringify(json) : null;
    const body = text === null ? plainPageFields(page, lm as string | null) : text.slice(1, -1);
    urlHash(url);
    const a = LANES[0] as number;
    const b = LANES[1] as number;
    if (text !== null) textRowHash(text);
    else plainRowHash(page.priority, lm as string | null, page.changeFrequency);
    this.#entries.push(a, b, LANES[0] as number, LANES[1] as number);
    let change: Change = 'new';
    const previous = this.#previous;
    if (previous !== null) {
      let found: 0 | 1 | 2;
      if (this.#sha1 === null) found = previous.compare(a, b, LANES[0] as number, LANES[1] as number);
      else found = this.#compareSha1(previous, this.#sha1, url, text ?? `{${body}}`);
      change = found === 0 ? 'new' : found === 1 ? 'unchanged' : 'changed';
    }
    // One object and one serialisation a page: this runs for every page of every site. The line is
    // JSON.stringify(marked) (the JSON form has no site, sitemap or change key). A plain page's row
    // is a literal of the keys the spread would give, in their order: every key after a spread is
    // defined through a V8 runtime call.
    const line = this.#prefix + body + CHANGE_TAIL[change];
    if (change !== 'unchanged' && this.#change === 'unchanged') this.#change = 'changed';
    if (this.#held !== null) {
      if (change === 'unchanged') {
        this.#heldText += `${line}\n`;
        this.#heldRows++;
        if (this.#heldText.length >= HELD_PIECE_CHARS) this.#heldPiece();
        return;
      }
      this.#release();
    }
    if (o.emitLine !== undefined) {
      o.emitLine(line);
      return;
    }
    const marked: ListedPageRow =
      lm === undefined
        ? { site: o.site, sitemap: o.sitemap, ...(json as PageJSON), change }
        : {
            site: o.site,
            sitemap: o.sitemap,
            url: page.url,
            priority: page.priority,
            lastModified: lm,
            changeFrequency: page.changeFrequency,
            newsStory: null,
            images: null,
            alternates: null,
            change,
          };
    this.#o.emit(marked, line);
  }

  close(): StoredPages {
    this.#closed = true;
    // All pages unchanged: the document is unchanged unless pages are gone.
    const gone = this.#count !== (this.#o.previous?.pageCount ?? -1);
    if (this.#held !== null) {
      if (gone) this.#release();
      else {
        this.#held = null;
        this.#heldText = '';
        this.#heldRows = 0;
      }
    } else if (this.#o.marking && gone && this.#change === 'unchanged') this.#change = 'changed';
    // The tracker is what the walk hands back with the document (`WalkedDocument.stored`).
    return this;
  }

  /** The pages went to the rows, not to the node: it has none to give back. */
  load(): Page[] {
    return [];
  }

  /** A page against a digest of layout 1 or 2: by the SHA-1s of its URL and row text, kept too. */
  #compareSha1(previous: DigestTable, sha1: EntryWords, url: string, text: string): 0 | 1 | 2 {
    sha1Hash(url);
    const a = LANES[0] as number;
    const b = LANES[1] as number;
    sha1Hash(text);
    const c = LANES[0] as number;
    const d = LANES[1] as number;
    sha1.push(a, b, c, d);
    return previous.compare(a, b, c, d);
  }

  /**
   * The last run's pages (by their index in its digest) whose URL this document did not list:
   * those removed once it is read to its end (`[]` without a last digest).
   */
  gonePages(): number[] {
    return this.#previous?.unseen() ?? [];
  }

  /**
   * The entries of the pages read, in the last digest's hashes: layout 2's SHA-1s when it is of
   * layout 1 or 2 (a cut document keeps its unread pages' entries: see `cutDocumentState`), else
   * layout 4's, those of `digest`.
   */
  get readEntries(): { version: 2 | 4; entries: Buffer } {
    if (this.#sha1 !== null) return { version: 2, entries: this.#sha1.bytes() };
    return { version: 4, entries: digestParts(this.digest).entries };
  }

  #heldPiece(): void {
    if (this.#heldText !== '') this.#held?.push({ text: Buffer.from(this.#heldText), rows: this.#heldRows });
    this.#heldText = '';
    this.#heldRows = 0;
  }

  #release(): void {
    this.#heldPiece();
    const held = this.#held ?? [];
    this.#held = null;
    this.#change = 'changed';
    const { emit, emitLine, emitLines } = this.#o;
    for (const piece of held) {
      if (emitLines !== undefined) {
        emitLines(piece.text, piece.rows);
        continue;
      }
      const lines = piece.text.toString('utf8').split('\n');
      lines.pop();
      if (emitLine !== undefined) for (const line of lines) emitLine(line);
      else for (const line of lines) emit(JSON.parse(line) as ListedPageRow, line);
    }
  }
}
