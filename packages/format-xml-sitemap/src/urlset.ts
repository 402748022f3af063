import {
  createExtensionRouter,
  DEFAULT_PRIORITY,
  detachString,
  type ExtensionRouter,
  isHttpUrl,
  newPageDraft,
  type PageDraft,
  type ParseContext,
  type ParseOutcome,
  parseIsoDate,
  type SitemapDate,
  type XmlElement,
  type XmlExtension,
  type XmlHandler,
} from '@usp-ts/core/parse';
import { parseChangeFrequency } from './change-frequency.js';
import { lastmodDates } from './date-cache.js';
import { readAlternate } from './hreflang.js';
import { isOwnNamespace, XHTML_NAMESPACE } from './namespaces.js';
import { parsePriority } from './priority.js';
import { SeenUrls } from './seen-urls.js';

/**
 * Reads a `<urlset>`. A page is emitted only at `</url>`, so a cut document keeps every complete
 * entry and never half of one. Anything that is not a `<url>` between entries is skipped with a
 * warning and reading goes on (usp stops at the first such element).
 */
export class UrlsetHandler implements XmlHandler {
  readonly type = 'PagesXMLSitemap' as const;
  // Only the <loc> (and what extensions keep) outlives close(): copying just those spares a
  // copy of every <lastmod>.
  readonly detachesText = true;
  private readonly ctx: ParseContext;
  private readonly rootNs: string;
  private readonly router: ExtensionRouter | null;
  private readonly maxUrlLength: number;
  /** Depth of `<url>` elements: 1, or deeper inside the extra `<urlset>` wrappers some sites nest. */
  private entryDepth = 1;
  private draft: PageDraft | null = null;
  /** Stripped `<loc>` of the current entry; `null` until one is read. */
  private loc: string | null = null;
  /** Depth of the stray element whose subtree is being skipped; -1 when none. */
  private skipDepth = -1;
  private stopped = false;
  /** Entry elements opened so far: the position reported to the context. */
  private entries = 0;
  /** Depth of the extension element whose subtree is being routed; -1 when none. */
  private extDepth = -1;
  /** Whether the extensions were told about the current entry (only entries that use them are). */
  private extStarted = false;
  private readonly seen = new SeenUrls();
  private readonly warnedStray = new Set<string>();
  // Generated sitemaps repeat values from entry to entry: the last parse is reused when the text
  // is the same (SitemapDate is immutable, so pages may share one).
  private lastDateText = '';
  private lastDate: SitemapDate | null = null;
  private lastPriorityText = '';
  private lastPriority: number | null = null;

  constructor(ctx: ParseContext, root: XmlElement, extensions: readonly XmlExtension[]) {
    this.ctx = ctx;
    this.rootNs = root.ns;
    this.router = extensions.length > 0 ? createExtensionRouter(extensions, ctx) : null;
    this.maxUrlLength = ctx.limits.maxUrlLength;
  }

  open(el: XmlElement): void {
    if (this.stopped || this.skipDepth >= 0) return;
    const depth = el.depth;
    const draft = this.draft;
    if (draft === null) {
      if (depth !== this.entryDepth) return;
      if (isOwnNamespace(el.ns, this.rootNs)) {
        if (el.local === 'url') {
          this.ctx.atEntry(++this.entries);
          this.startEntry();
          return;
        }
        if (el.local === 'urlset') {
          this.entryDepth++;
          return;
        }
      }
      this.skip(el);
      return;
    }
    const router = this.router;
    if (router !== null) {
      if (this.extDepth >= 0) {
        router.open(el, draft);
        return;
      }
      // Sitemap elements (the root's namespace) are never an extension's: skip the lookup.
      if (el.ns !== this.rootNs && router.claims(el.ns)) {
        if (!this.extStarted) {
          this.extStarted = true;
          router.startEntry(draft);
        }
        this.extDepth = depth;
        router.open(el, draft);
        return;
      }
    }
    if (depth === this.entryDepth + 1 && isAlternateLink(el, this.rootNs)) readAlternate(el, draft, this.ctx);
  }

  close(el: XmlElement, text: string): void {
    if (this.stopped) return;
    const depth = el.depth;
    if (this.skipDepth >= 0) {
      if (depth === this.skipDepth) this.skipDepth = -1;
      return;
    }
    const draft = this.draft;
    if (draft === null) {
      if (depth < this.entryDepth) this.entryDepth = depth;
      return;
    }
    if (depth === this.entryDepth) {
      this.endEntry(draft);
      this.ctx.atEntry(0);
      return;
    }
    if (this.extDepth >= 0) {
      if (depth === this.extDepth) this.extDepth = -1;
      (this.router as ExtensionRouter).close(el, detach(text), draft);
      return;
    }
    if (depth !== this.entryDepth + 1 || !isOwnNamespace(el.ns, this.rootNs)) return;
    switch (el.local) {
      case 'loc':
        // Set early so extensions can name the page in their warnings.
        this.loc = draft.url = detach(text.trim());
        break;
      case 'lastmod':
        draft.lastModified = this.readDate(text);
        break;
      case 'changefreq':
        this.readChangeFrequency(text, draft);
        break;
      case 'priority':
        this.readPriority(text, draft);
        break;
    }
  }

  end(_truncated: boolean): ParseOutcome {
    // A half-read entry is dropped: only `</url>` emits.
    this.draft = null;
    return { type: 'PagesXMLSitemap' };
  }

  private startEntry(): void {
    const draft = newPageDraft();
    this.draft = draft;
    this.loc = null;
    this.extDepth = -1;
  }

  private endEntry(draft: PageDraft): void {
    this.draft = null;
    const loc = this.loc;
    this.loc = null;
    draft.url = loc ?? '';
    if (this.extStarted) {
      this.extStarted = false;
      (this.router as ExtensionRouter).endEntry(draft);
    }
    if (loc === null || loc.length === 0) {
      this.ctx.warn(
        'missing-field',
        loc === null ? '<url> without <loc> skipped' : '<url> with an empty <loc> skipped',
      );
      return;
    }
    if (loc.length > this.maxUrlLength) {
      this.ctx.warn(
        'invalid-url',
        `Page URL longer than ${this.maxUrlLength} characters skipped: ${loc.slice(0, 100)}…`,
      );
      return;
    }
    if (!isHttpUrl(loc)) {
      this.ctx.warn('invalid-url', `Page URL is not an absolute http(s) URL, skipped: ${loc}`);
      return;
    }
    if (!this.seen.add(loc)) {
      this.ctx.warn('duplicate-url', `Duplicate page URL skipped: ${loc}`);
      return;
    }
    if (!this.ctx.page(draft)) this.stopped = true;
  }

  private skip(el: XmlElement): void {
    this.skipDepth = el.depth;
    const name = el.ns === '' || el.ns === this.rootNs ? el.local : `{${el.ns}}${el.local}`;
    if (this.warnedStray.has(name)) return;
    this.warnedStray.add(name);
    this.ctx.warn('unknown-element', `<${name}> outside <url> skipped`);
  }

  private readDate(text: string): SitemapDate | null {
    const s = text.trim();
    if (s.length === 0) return null;
    if (s === this.lastDateText) return this.lastDate;
    let date = lastmodDates.get(s);
    if (date === undefined) {
      const read = parseIsoDate(s);
      if (read === null) {
        this.ctx.warn('invalid-date', `Invalid <lastmod> ignored: ${detach(s)}`);
        return null;
      }
      // Kept for the process: its own copy, not a view that would pin the document's chunk.
      lastmodDates.set(detach(s), read);
      date = read;
    }
    this.lastDateText = s;
    this.lastDate = date;
    return date;
  }

  private readChangeFrequency(text: string, draft: PageDraft): void {
    const value = parseChangeFrequency(text);
    if (value === undefined) {
      this.ctx.warn(
        'invalid-changefreq',
        `Invalid <changefreq> ${JSON.stringify(text.trim())}, read as "always"`,
      );
      draft.changeFrequency = 'always';
      return;
    }
    draft.changeFrequency = value;
  }

  private readPriority(text: string, draft: PageDraft): void {
    let value: number | null;
    if (text === this.lastPriorityText) value = this.lastPriority;
    else {
      value = parsePriority(text);
      if (value !== null) {
        this.lastPriorityText = text;
        this.lastPriority = value;
      }
    }
    if (value === null) {
      this.ctx.warn('invalid-priority', `Invalid <priority> ${JSON.stringify(text.trim())}, read as 0.5`);
      draft.priority = DEFAULT_PRIORITY;
      return;
    }
    draft.priority = value;
  }
}

/** sax cuts text out of a whole document chunk; shorter strings than this are copies already. */
function detach(s: string): string {
  return s.length > 12 ? detachString(s) : s;
}

/**
 * `xhtml:link`; also a bare `link` (a namespace-less urlset often leaves the prefix out or
 * undeclared) and the qualified name itself, in case the prefix could not be resolved.
 */
function isAlternateLink(el: XmlElement, rootNs: string): boolean {
  const local = el.local;
  if (local === 'link') return el.ns === XHTML_NAMESPACE || el.ns === '' || el.ns === rootNs;
  return local === 'xhtml:link';
}
