import {
  createExtensionRouter,
  type ExtensionRouter,
  type FeedLink,
  FeedPageEmitter,
  feedNewsStory,
  feedText,
  newPageDraft,
  type PageDraft,
  type ParseContext,
  type ParseOutcome,
  parseIsoDate,
  resolveFeedLink,
  type SitemapDate,
  type XmlElement,
  type XmlExtension,
  type XmlHandler,
} from '@usp-ts/core/parse';

/**
 * Which element says when an entry was published, by meaning and not by order: Atom 1.0's
 * `<published>`, then Atom 0.3's `<issued>` (usp reads these two), then 0.3's `<created>` (the
 * entry's creation, a fallback). A real 0.3 feed lists `<created>` before `<issued>`.
 */
const PUBLISHED_RANK: Readonly<Record<string, number>> = { published: 0, issued: 1, created: 2 };

/** What one `<entry>` said, before validation. */
interface EntryFields {
  /** First link that is an alternate (`rel="alternate"` or no `rel`). */
  alternate: FeedLink | null;
  /** First link of any `rel`: the fallback. */
  first: FeedLink | null;
  /** An `href` that could not be used, for the warning when nothing else could. */
  badHref: string | null;
  title: string | null;
  summary: string | null;
  /** `<published>` (1.0), `<issued>` or `<created>` (0.3), the best-ranked one seen. */
  published: SitemapDate | null;
  /** Rank of `published` in {@link PUBLISHED_RANK}; lower is better. */
  publishedRank: number;
  /** `<updated>` (1.0) or `<modified>` (0.3): used only without a published date. */
  updated: SitemapDate | null;
}

/**
 * Reads `<entry>` elements of Atom 1.0 and 0.3 alike: the two differ in element names for the
 * dates and description, which are all accepted, not in structure. Only the entry's own children
 * in the feed's namespace count; `xml:base` is honoured for relative `href`s. A page is emitted at
 * `</entry>`, so a cut feed keeps every complete entry and no half one.
 */
export class AtomHandler implements XmlHandler {
  /** Known from the root element: lets the driver tag streamed pages before the end. */
  readonly type = 'PagesAtomSitemap' as const;
  private readonly ctx: ParseContext;
  private readonly ns: string;
  private readonly router: ExtensionRouter | null;
  /** Effective `xml:base` of the open element at each depth. */
  private readonly bases: string[];
  private draft: PageDraft | null = null;
  private fields: EntryFields | null = null;
  private entryDepth = -1;
  /** Whether the entry child being read has child elements (an XHTML title: not plain text). */
  private fieldHasMarkup = false;
  /** Entries opened so far: the position reported to the context. */
  private entries = 0;
  private stopped = false;
  private readonly pages: FeedPageEmitter;

  constructor(ctx: ParseContext, root: XmlElement, extensions: readonly XmlExtension[]) {
    this.ctx = ctx;
    this.ns = root.ns;
    this.router = extensions.length > 0 ? createExtensionRouter(extensions, ctx) : null;
    this.bases = [withBase(ctx.url, root)];
    this.pages = new FeedPageEmitter(ctx, 'Atom <entry>');
  }

  open(el: XmlElement): void {
    if (this.stopped) return;
    const depth = el.depth;
    this.bases[depth] = withBase(this.bases[depth - 1] ?? this.ctx.url, el);
    const draft = this.draft;
    const fields = this.fields;
    if (draft === null || fields === null) {
      if (el.local === 'entry' && el.ns === this.ns) {
        this.ctx.atEntry(++this.entries);
        this.startEntry(depth);
      }
      return;
    }
    if (this.router?.open(el, draft) === true) return;
    if (depth === this.entryDepth + 1) {
      this.fieldHasMarkup = false;
      if (el.local === 'link' && el.ns === this.ns) this.readLink(el, fields);
    } else if (depth === this.entryDepth + 2) {
      this.fieldHasMarkup = true;
    }
  }

  close(el: XmlElement, text: string): void {
    if (this.stopped) return;
    const draft = this.draft;
    const fields = this.fields;
    if (draft === null || fields === null) return;
    if (el.depth === this.entryDepth) {
      this.endEntry(draft, fields);
      this.ctx.atEntry(0);
      return;
    }
    if (this.router?.close(el, text, draft) === true) return;
    if (el.depth !== this.entryDepth + 1 || el.ns !== this.ns) return;
    switch (el.local) {
      case 'title':
        if (!this.fieldHasMarkup) fields.title ??= feedText(text);
        break;
      case 'summary':
      case 'tagline':
        if (!this.fieldHasMarkup) fields.summary ??= feedText(text);
        break;
      case 'published':
      case 'issued':
      case 'created': {
        const rank = PUBLISHED_RANK[el.local];
        if (rank >= fields.publishedRank) break;
        const date = this.readDate(el.local, text);
        if (date !== null) {
          fields.published = date;
          fields.publishedRank = rank;
        }
        break;
      }
      case 'updated':
      case 'modified':
        fields.updated ??= this.readDate(el.local, text);
        break;
    }
  }

  end(_truncated: boolean): ParseOutcome {
    // An entry cut off before `</entry>` is not emitted.
    this.draft = null;
    this.fields = null;
    return { type: 'PagesAtomSitemap' };
  }

  private startEntry(depth: number): void {
    const draft = newPageDraft();
    this.draft = draft;
    this.fields = {
      alternate: null,
      first: null,
      badHref: null,
      title: null,
      summary: null,
      published: null,
      publishedRank: Number.POSITIVE_INFINITY,
      updated: null,
    };
    this.entryDepth = depth;
    this.router?.startEntry(draft);
  }

  private readLink(el: XmlElement, fields: EntryFields): void {
    const href = el.attrs.href;
    if (href === undefined || href.trim() === '') return;
    const link = resolveFeedLink(href, this.bases[el.depth]);
    if (link === null) {
      fields.badHref ??= href;
      return;
    }
    fields.first ??= link;
    const rel = (el.attrs.rel ?? '').trim().toLowerCase();
    // Atom 1.0 section 4.2.7.2: a link without rel is an alternate link.
    if (rel === '' || rel === 'alternate') fields.alternate ??= link;
  }

  private endEntry(draft: PageDraft, fields: EntryFields): void {
    this.draft = null;
    this.fields = null;
    this.entryDepth = -1;
    const link = fields.alternate ?? fields.first;
    const title = fields.title ?? fields.summary;
    if (title !== null) draft.newsStory = feedNewsStory(title, fields.published ?? fields.updated);
    draft.url = link?.url ?? '';
    this.router?.endEntry(draft);

    if (link === null) {
      if (fields.badHref !== null) {
        this.ctx.warn('invalid-url', `Atom <entry> link is not an http(s) URL, skipped: ${fields.badHref}`);
      } else {
        this.ctx.warn(
          'missing-field',
          `Atom <entry> without a <link href> skipped${title === null ? '' : `: ${title}`}`,
        );
      }
      return;
    }
    if (title === null)
      this.ctx.warn('missing-field', `Atom <entry> without <title> or <summary>: ${link.url}`);
    if (!this.pages.emit(draft, link)) this.stopped = true;
  }

  private readDate(name: string, text: string): SitemapDate | null {
    const s = text.trim();
    if (s === '') return null;
    const date = parseIsoDate(s);
    if (date === null) this.ctx.warn('invalid-date', `Invalid Atom <${name}> ignored: ${s}`);
    return date;
  }
}

function withBase(parent: string, el: XmlElement): string {
  const base = el.attrs['xml:base'];
  if (base === undefined) return parent;
  return resolveFeedLink(base, parent)?.url ?? parent;
}
