import {
  isHttpUrl,
  type ParseContext,
  type ParseOutcome,
  parseIsoDate,
  resolveUrl,
  type SitemapDate,
  type XmlElement,
  type XmlHandler,
} from '@usp-ts/core/parse';
import { isOwnNamespace } from './namespaces.js';

/** A scheme at the start of a reference (`ftp:`, `javascript:`): such a reference is not relative. */
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * Reads a `<sitemapindex>`. A child is emitted at `</sitemap>` with its `<lastmod>`, in document
 * order, de-duplicated. Only a `<loc>` directly inside `<sitemap>` counts (usp takes any `<loc>`,
 * even one in a stray `<url>`). A relative `<loc>` is resolved against the index URL with a
 * warning: the protocol asks for absolute URLs, but the intent of `/sitemap-2.xml` is clear.
 */
export class SitemapIndexHandler implements XmlHandler {
  readonly type = 'IndexXMLSitemap' as const;
  private readonly ctx: ParseContext;
  private readonly rootNs: string;
  private readonly maxUrlLength: number;
  private entryDepth = 1;
  private inEntry = false;
  private loc: string | null = null;
  private lastModified: SitemapDate | null = null;
  private skipDepth = -1;
  private stopped = false;
  /** Entry elements opened so far: the position reported to the context. */
  private entries = 0;
  private readonly seen = new Set<string>();
  private readonly warnedStray = new Set<string>();

  constructor(ctx: ParseContext, root: XmlElement) {
    this.ctx = ctx;
    this.rootNs = root.ns;
    this.maxUrlLength = ctx.limits.maxUrlLength;
  }

  open(el: XmlElement): void {
    if (this.stopped || this.skipDepth >= 0 || this.inEntry) return;
    if (el.depth !== this.entryDepth) return;
    if (isOwnNamespace(el.ns, this.rootNs)) {
      if (el.local === 'sitemap') {
        this.ctx.atEntry(++this.entries);
        this.inEntry = true;
        this.loc = null;
        this.lastModified = null;
        return;
      }
      if (el.local === 'sitemapindex') {
        this.entryDepth++;
        return;
      }
    }
    this.skipDepth = el.depth;
    const name = el.ns === '' || el.ns === this.rootNs ? el.local : `{${el.ns}}${el.local}`;
    if (this.warnedStray.has(name)) return;
    this.warnedStray.add(name);
    this.ctx.warn('unknown-element', `<${name}> outside <sitemap> skipped`);
  }

  close(el: XmlElement, text: string): void {
    if (this.stopped) return;
    const depth = el.depth;
    if (this.skipDepth >= 0) {
      if (depth === this.skipDepth) this.skipDepth = -1;
      return;
    }
    if (!this.inEntry) {
      if (depth < this.entryDepth) this.entryDepth = depth;
      return;
    }
    if (depth === this.entryDepth) {
      this.endEntry();
      this.ctx.atEntry(0);
      return;
    }
    if (depth !== this.entryDepth + 1 || !isOwnNamespace(el.ns, this.rootNs)) return;
    if (el.local === 'loc') {
      this.loc = text.trim();
    } else if (el.local === 'lastmod') {
      const s = text.trim();
      this.lastModified = s.length === 0 ? null : parseIsoDate(s);
      if (this.lastModified === null && s.length > 0) {
        this.ctx.warn('invalid-date', `Invalid <lastmod> ignored: ${s}`);
      }
    }
  }

  end(_truncated: boolean): ParseOutcome {
    this.inEntry = false;
    return { type: 'IndexXMLSitemap' };
  }

  private endEntry(): void {
    this.inEntry = false;
    const url = this.childUrl(this.loc);
    if (url === null) return;
    if (this.seen.has(url)) {
      this.ctx.warn('duplicate-url', `Duplicate child sitemap skipped: ${url}`);
      return;
    }
    this.seen.add(url);
    if (!this.ctx.child({ url, lastModified: this.lastModified })) this.stopped = true;
  }

  private childUrl(loc: string | null): string | null {
    if (loc === null || loc.length === 0) {
      this.ctx.warn(
        'missing-field',
        loc === null ? '<sitemap> without <loc> skipped' : 'Empty <loc> skipped',
      );
      return null;
    }
    if (loc.length > this.maxUrlLength) {
      this.ctx.warn('invalid-url', `Child sitemap URL longer than ${this.maxUrlLength} characters skipped`);
      return null;
    }
    if (isHttpUrl(loc)) return loc;
    if (!HAS_SCHEME.test(loc)) {
      const resolved = resolveUrl(loc, this.ctx.url);
      if (resolved !== null && isHttpUrl(resolved) && resolved.length <= this.maxUrlLength) {
        this.ctx.warn('relative-url', `Relative child sitemap URL ${loc} resolved to ${resolved}`);
        return resolved;
      }
    }
    this.ctx.warn('invalid-url', `Child sitemap URL is not an http(s) URL, skipped: ${loc}`);
    return null;
  }
}
