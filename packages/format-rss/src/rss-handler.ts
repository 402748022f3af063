import {
  createExtensionRouter,
  type ExtensionRouter,
  FeedPageEmitter,
  feedNewsStory,
  feedText,
  newPageDraft,
  type PageDraft,
  type ParseContext,
  type ParseOutcome,
  parseRfc2822Date,
  resolveFeedLink,
  type SitemapDate,
  type XmlElement,
  type XmlExtension,
  type XmlHandler,
} from '@usp-ts/core/parse';

/** What one `<item>` said, before validation. */
interface ItemFields {
  link: string | null;
  title: string | null;
  description: string | null;
  pubDate: SitemapDate | null;
}

/**
 * Reads `<item>` elements. Only the item's own un-namespaced children count (`<atom:link>`,
 * `<media:title>`, `<dc:date>` and `content:encoded` never overwrite them: usp matches bare local
 * names and gets both wrong), and an empty element is just absent: it never stops the feed.
 * A page is emitted at `</item>`, so a cut feed keeps every complete item and no half one.
 */
export class RssHandler implements XmlHandler {
  /** Known from the root element: lets the driver tag streamed pages before the end. */
  readonly type = 'PagesRSSSitemap' as const;
  private readonly ctx: ParseContext;
  /** The namespace of `<rss>` (normally none): the item elements live in it. */
  private readonly ns: string;
  private readonly router: ExtensionRouter | null;
  private draft: PageDraft | null = null;
  private fields: ItemFields | null = null;
  private itemDepth = -1;
  /** Items opened so far: the position reported to the context. */
  private items = 0;
  private stopped = false;
  private readonly pages: FeedPageEmitter;

  constructor(ctx: ParseContext, root: XmlElement, extensions: readonly XmlExtension[]) {
    this.ctx = ctx;
    this.ns = root.ns;
    this.router = extensions.length > 0 ? createExtensionRouter(extensions, ctx) : null;
    this.pages = new FeedPageEmitter(ctx, 'RSS <item>');
  }

  open(el: XmlElement): void {
    if (this.stopped) return;
    const draft = this.draft;
    if (draft === null) {
      // Items normally sit in <channel>, but feeds that put them elsewhere are still read.
      if (el.local === 'item' && el.ns === this.ns) {
        this.ctx.atEntry(++this.items);
        this.startItem(el.depth);
      }
      return;
    }
    this.router?.open(el, draft);
  }

  close(el: XmlElement, text: string): void {
    if (this.stopped) return;
    const draft = this.draft;
    const fields = this.fields;
    if (draft === null || fields === null) return;
    if (el.depth === this.itemDepth) {
      this.endItem(draft, fields);
      this.ctx.atEntry(0);
      return;
    }
    if (this.router?.close(el, text, draft) === true) return;
    if (el.depth !== this.itemDepth + 1 || el.ns !== this.ns) return;
    switch (el.local) {
      case 'link':
        fields.link ??= feedText(text);
        break;
      case 'title':
        fields.title ??= feedText(text);
        break;
      case 'description':
        fields.description ??= feedText(text);
        break;
      case 'pubDate':
        fields.pubDate ??= this.readDate(text);
        break;
    }
  }

  end(_truncated: boolean): ParseOutcome {
    // An item cut off before `</item>` is not emitted.
    this.draft = null;
    this.fields = null;
    return { type: 'PagesRSSSitemap' };
  }

  private startItem(depth: number): void {
    const draft = newPageDraft();
    this.draft = draft;
    this.fields = { link: null, title: null, description: null, pubDate: null };
    this.itemDepth = depth;
    this.router?.startEntry(draft);
  }

  private endItem(draft: PageDraft, fields: ItemFields): void {
    this.draft = null;
    this.fields = null;
    this.itemDepth = -1;
    const title = fields.title ?? fields.description;
    if (title !== null) draft.newsStory = feedNewsStory(title, fields.pubDate);
    const link = fields.link === null ? null : resolveFeedLink(fields.link, this.ctx.url);
    draft.url = link?.url ?? '';
    this.router?.endEntry(draft);

    if (fields.link === null) {
      this.ctx.warn(
        'missing-field',
        `RSS <item> without <link> skipped${title === null ? '' : `: ${title}`}`,
      );
      return;
    }
    if (link === null) {
      this.ctx.warn('invalid-url', `RSS <item> link is not an http(s) URL, skipped: ${fields.link}`);
      return;
    }
    if (title === null) {
      this.ctx.warn('missing-field', `RSS <item> without <title> or <description> skipped: ${link.url}`);
      return;
    }
    if (!this.pages.emit(draft, link, fields.link)) this.stopped = true;
  }

  private readDate(text: string): SitemapDate | null {
    const s = text.trim();
    if (s === '') return null;
    const date = parseRfc2822Date(s);
    if (date === null) this.ctx.warn('invalid-date', `Invalid RSS <pubDate> ignored: ${s}`);
    return date;
  }
}
