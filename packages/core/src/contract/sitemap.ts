import { brandClass, isBranded } from './brand.js';
import type { ChildRef, Page, RobotsRules } from './model.js';
import { type StoredPages, storedPages, type UrlLines, type UrlLinesOptions } from './page-store.js';
import type { SitemapDate } from './sitemap-date.js';
import { OK_SUMMARY, type WalkSummary } from './walk-summary.js';
import type { Warning } from './warning.js';

export type IndexSitemapType = 'IndexWebsiteSitemap' | 'IndexRobotsTxtSitemap' | 'IndexXMLSitemap';
export type PagesSitemapType =
  | 'PagesXMLSitemap'
  | 'PagesTextSitemap'
  | 'PagesRSSSitemap'
  | 'PagesAtomSitemap';
export type SitemapType = IndexSitemapType | PagesSitemapType | 'InvalidSitemap';
/** The types a single document can parse to (the website root is made by the tree). */
export type DocumentSitemapType = Exclude<SitemapType, 'IndexWebsiteSitemap'>;

interface NodeInit {
  url: string;
  /** The `<lastmod>` the parent index gave for this sitemap. */
  lastModified?: SitemapDate | null;
  warnings?: Warning[];
}

type PagesInit = NodeInit & { pages?: readonly Page[]; stored?: StoredPages };

/** What every sitemap node has. Node `type`s are usp's class names. */
abstract class BaseSitemap {
  /** True for this node class (or a subclass) from any copy of core (see brand.ts). */
  static [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class `instanceof` asked about, a subclass included
    return isBranded(this, value);
  }

  // Fields are `declare`d and set in the constructors, in the order the emitted class fields
  // gave them (base first, then `type`): a class field is defined on each new object through an
  // IC that goes megamorphic across the node classes, about twice the cost of an assignment,
  // for every node of every walk (a batch builds several a site).
  abstract readonly type: SitemapType;
  declare readonly url: string;
  /** The `<lastmod>` of the index entry that named this sitemap; `null` when none. */
  declare readonly lastModified: SitemapDate | null;
  /** Warnings raised while fetching and parsing this document (not its children). */
  declare readonly warnings: Warning[];

  constructor(init: NodeInit) {
    this.url = init.url;
    this.lastModified = init.lastModified ?? null;
    this.warnings = init.warnings ?? [];
  }

  /** Pages of this sitemap and its descendants, depth-first in document order, duplicates kept. */
  *allPages(): Generator<Page, void, undefined> {
    if (this instanceof AbstractPagesSitemap) {
      yield* this.iteratePages();
    } else if (this instanceof AbstractIndexSitemap) {
      for (const child of this.subSitemaps) yield* child.allPages();
    }
  }

  /** Every descendant sitemap, pre-order depth-first, `InvalidSitemap`s included, this node excluded. */
  *allSitemaps(): Generator<Sitemap, void, undefined> {
    if (this instanceof AbstractIndexSitemap) {
      for (const child of this.subSitemaps) {
        yield child;
        yield* child.allSitemaps();
      }
    }
  }
}

export abstract class AbstractIndexSitemap extends BaseSitemap {
  abstract override readonly type: IndexSitemapType;
  declare readonly subSitemaps: Sitemap[];
  constructor(init: NodeInit & { subSitemaps?: Sitemap[] }) {
    super(init);
    this.subSitemaps = init.subSitemaps ?? [];
  }
}

export abstract class AbstractPagesSitemap extends BaseSitemap {
  abstract override readonly type: PagesSitemapType;
  #stored: StoredPages;
  constructor(init: PagesInit) {
    super(init);
    this.#stored = init.stored ?? storedPages(init.pages ?? []);
  }
  /** A fresh array on every access (pages may live outside memory, as usp's do). */
  get pages(): Page[] {
    return this.#stored.load();
  }
  /**
   * The pages one at a time, in document order, without building the array when the store can
   * stream them (the temp-file store reads its file in bounded chunks): what a writer of a large
   * tree should use.
   */
  iteratePages(): Iterable<Page> {
    return this.#stored.iterate?.() ?? this.#stored.load();
  }
  /**
   * The URLs of the pages as lines of bytes ready to print when the store can give them without
   * making page objects (`usp`'s temp-file store can, see `StoredPages.urlLines`); `null` when
   * it cannot, and then the pages are printed from `iteratePages()`.
   */
  pageUrlLines(options: UrlLinesOptions): UrlLines | null {
    return this.#stored.urlLines?.(options) ?? null;
  }
  get pageCount(): number {
    return this.#stored.count;
  }
  /** Frees the storage behind the pages (a temp file, memory). */
  releasePages(): void {
    this.#stored.release?.();
  }
}

/** The root of a walk: the homepage, with robots.txt and known-path sitemaps as children. */
export class IndexWebsiteSitemap extends AbstractIndexSitemap {
  declare readonly type: 'IndexWebsiteSitemap';
  /** How the walk that built this tree ended (`ok`, `unreachable`, `partial`) and why. */
  declare readonly summary: WalkSummary;
  constructor(init: NodeInit & { subSitemaps?: Sitemap[]; summary?: WalkSummary }) {
    super(init);
    this.type = 'IndexWebsiteSitemap';
    this.summary = init.summary ?? OK_SUMMARY;
  }
}

/** A robots.txt; children are its `Sitemap:` lines. */
export class IndexRobotsTxtSitemap extends AbstractIndexSitemap {
  declare readonly type: 'IndexRobotsTxtSitemap';
  /** The rest of robots.txt (groups, allow/disallow), when the robots format provides it. */
  declare readonly robots: RobotsRules | null;
  /** The `Sitemap:` entries as written, whether or not they were fetched. */
  declare readonly entries: readonly ChildRef[];
  constructor(
    init: NodeInit & { subSitemaps?: Sitemap[]; robots?: RobotsRules | null; entries?: readonly ChildRef[] },
  ) {
    super(init);
    this.type = 'IndexRobotsTxtSitemap';
    this.robots = init.robots ?? null;
    this.entries = init.entries ?? [];
  }
}

/** A `<sitemapindex>`. */
export class IndexXMLSitemap extends AbstractIndexSitemap {
  declare readonly type: 'IndexXMLSitemap';
  /** The `<sitemap>` entries as written (with their `<lastmod>`), whether or not they were fetched. */
  declare readonly entries: readonly ChildRef[];
  constructor(init: NodeInit & { subSitemaps?: Sitemap[]; entries?: readonly ChildRef[] }) {
    super(init);
    this.type = 'IndexXMLSitemap';
    this.entries = init.entries ?? [];
  }
}

export class PagesXMLSitemap extends AbstractPagesSitemap {
  declare readonly type: 'PagesXMLSitemap';
  constructor(init: PagesInit) {
    super(init);
    this.type = 'PagesXMLSitemap';
  }
}
export class PagesTextSitemap extends AbstractPagesSitemap {
  declare readonly type: 'PagesTextSitemap';
  constructor(init: PagesInit) {
    super(init);
    this.type = 'PagesTextSitemap';
  }
}
export class PagesRSSSitemap extends AbstractPagesSitemap {
  declare readonly type: 'PagesRSSSitemap';
  constructor(init: PagesInit) {
    super(init);
    this.type = 'PagesRSSSitemap';
  }
}
export class PagesAtomSitemap extends AbstractPagesSitemap {
  declare readonly type: 'PagesAtomSitemap';
  constructor(init: PagesInit) {
    super(init);
    this.type = 'PagesAtomSitemap';
  }
}

/** A sitemap that could not be fetched or parsed; `reason` says why. */
export class InvalidSitemap extends BaseSitemap {
  declare readonly type: 'InvalidSitemap';
  declare readonly reason: string;
  constructor(init: NodeInit & { reason: string }) {
    super(init);
    this.type = 'InvalidSitemap';
    this.reason = init.reason;
  }
}

for (const [cls, name] of [
  [BaseSitemap, 'BaseSitemap'],
  [AbstractIndexSitemap, 'AbstractIndexSitemap'],
  [AbstractPagesSitemap, 'AbstractPagesSitemap'],
  [IndexWebsiteSitemap, 'IndexWebsiteSitemap'],
  [IndexRobotsTxtSitemap, 'IndexRobotsTxtSitemap'],
  [IndexXMLSitemap, 'IndexXMLSitemap'],
  [PagesXMLSitemap, 'PagesXMLSitemap'],
  [PagesTextSitemap, 'PagesTextSitemap'],
  [PagesRSSSitemap, 'PagesRSSSitemap'],
  [PagesAtomSitemap, 'PagesAtomSitemap'],
  [InvalidSitemap, 'InvalidSitemap'],
] as const) {
  brandClass(cls, name);
}

export type IndexSitemap = IndexWebsiteSitemap | IndexRobotsTxtSitemap | IndexXMLSitemap;
export type PagesSitemap = PagesXMLSitemap | PagesTextSitemap | PagesRSSSitemap | PagesAtomSitemap;
export type Sitemap = IndexSitemap | PagesSitemap | InvalidSitemap;

export function isIndexSitemap(s: Sitemap): s is IndexSitemap {
  return s instanceof AbstractIndexSitemap;
}
export function isPagesSitemap(s: Sitemap): s is PagesSitemap {
  return s instanceof AbstractPagesSitemap;
}

const PAGES_CLASSES = {
  PagesXMLSitemap,
  PagesTextSitemap,
  PagesRSSSitemap,
  PagesAtomSitemap,
} as const;

/** Builds a pages node of the given type (used by the document parser and the tree). */
export function createPagesSitemap(type: PagesSitemapType, init: PagesInit): PagesSitemap {
  return new PAGES_CLASSES[type](init);
}
