import type { ChildRef, Page, PageDraft, RobotsRules } from './model.js';
import type { DocumentSitemapType } from './sitemap.js';
import type { WarningCode } from './warning.js';

/** Case-insensitive response header lookup; `null` when absent. */
export type HeaderLookup = (name: string) => string | null;

/** What a format sees of a document when deciding whether it claims it. */
export interface DocumentInfo {
  /** Final URL of the document (after redirects). */
  readonly url: string;
  readonly headers: HeaderLookup;
  /** The decoded start of the document (BOM removed; up to the first 1,024 characters). */
  readonly head: string;
}

/** Limits a parser must respect; the document driver fills in defaults. */
export interface ParseLimits {
  /** Stop after this many pages in one document (the rest is reported as `limit`). */
  readonly maxPagesPerDocument: number;
  /** Stop collecting child references after this many in one index. */
  readonly maxChildrenPerIndex: number;
  /** Longest URL accepted; longer ones are dropped with a warning. */
  readonly maxUrlLength: number;
}

/**
 * Where a parser is in its document: the entry it reads (1-based, counting every entry element
 * of the format: `<url>`, `<sitemap>`, `<item>`, `<entry>`, valid or not), or the line (1-based)
 * of a text format.
 */
export type DocumentPosition = { readonly entry: number } | { readonly line: number };

/** Handed to a parser: where its results and warnings go. */
export interface ParseContext {
  /** The document URL; relative references resolve against it. */
  readonly url: string;
  readonly limits: ParseLimits;
  /**
   * The entry being read from now on (1-based, every entry element of the format counted, valid
   * or not), `0` between entries: the pages, children and warnings the parser reports next belong
   * to it (`usp validate` locates its findings so). Optional for a format: one that never calls it
   * (or `atLine`) parses the same, its findings are just not located.
   */
  atEntry(entry: number): void;
  /** Like `atEntry`, for a text format: the line (1-based) being read from now on. */
  atLine(line: number): void;
  warn(code: WarningCode, message: string): void;
  /**
   * Emits one page. Returns `false` when the page was refused because the page budget is
   * spent (the driver then warns `limit`): the parser should stop.
   */
  page(page: Page): boolean;
  /**
   * Emits one child sitemap reference (index formats). Returns `false` when it was refused
   * because the fan-out cap is reached: the parser should stop.
   */
  child(ref: ChildRef): boolean;
}

/** What a parser says at the end: which node type the document is. */
export interface ParseOutcome {
  readonly type: DocumentSitemapType;
  /** For `InvalidSitemap`. */
  readonly reason?: string;
  /** For `IndexRobotsTxtSitemap`: the rest of the file's rules. */
  readonly robots?: RobotsRules;
}

// ---------------------------------------------------------------------------------------------
// Text formats (robots.txt, plain text): claim a non-XML document and read decoded text.

export interface TextParser {
  /**
   * The node type this document becomes, when the parser knows it up front (`PagesTextSitemap`):
   * streamed page batches are tagged with it. Default: `PagesTextSitemap`.
   */
  readonly type?: DocumentSitemapType;
  /** Decoded text in arbitrary pieces (a line may span pieces). */
  write(text: string): void;
  /**
   * The document is over. `truncated` is set when the body broke off (reset, cap, abort): the
   * last line has no terminator and may be a cut URL, so it should be dropped.
   */
  end(truncated?: boolean): ParseOutcome;
}

export interface TextFormat {
  readonly kind: 'text';
  readonly name: string;
  /** Claims a document that is not XML. Formats are asked in registry order; the first claim wins. */
  claims(doc: DocumentInfo): boolean;
  createParser(ctx: ParseContext): TextParser;
}

// ---------------------------------------------------------------------------------------------
// XML formats: claim a root element by namespace URI + local name; receive element events.

/** A resolved element name. `ns` is the namespace URI, `''` for none. Prefixes never reach plugins. */
export interface XmlName {
  readonly ns: string;
  readonly local: string;
}

/**
 * An element as the engine reports it. The object is only lent: it is valid from `open()` until
 * the `close()` of that element returns, and the engine then reuses it for a later element at
 * the same depth. Copy the fields (or `attrs`, which is never reused) to keep them longer. The
 * root element handed to `createHandler` is the exception: it is never reused.
 */
export interface XmlElement extends XmlName {
  /** Attributes by their name as written (`hreflang`, `xml:lang`); values entity-decoded. */
  readonly attrs: Readonly<Record<string, string>>;
  /** 0 for the root element. */
  readonly depth: number;
}

/** `ns: '*'` claims the local name in any namespace (RSS's `<rss>`, for example). */
export interface XmlRootMatch {
  readonly ns: string;
  readonly local: string;
}

export interface XmlHandler {
  /**
   * The node type this document becomes, when the root tells (`<urlset>` → `PagesXMLSitemap`):
   * streamed page batches are tagged with it. Default: `PagesXMLSitemap`.
   */
  readonly type?: DocumentSitemapType;
  /**
   * `true` when the handler copies (`detachString`) every text it keeps past `close()`: the
   * engine then hands text as sax cut it, possibly a view that keeps a whole document chunk
   * alive. By default the engine copies every text longer than 12 characters itself, which
   * costs a copy per element for text that is only parsed and dropped (dates, numbers).
   */
  readonly detachesText?: boolean;
  /** Every element below the root, in document order. */
  open(el: XmlElement): void;
  /**
   * Element end. `text` is the character data since the last tag (start or end), entity-decoded
   * once, CDATA included, not trimmed: for a leaf element, its content.
   */
  close(el: XmlElement, text: string): void;
  /**
   * The document is over. `truncated` is set when it ended early (cut off, malformed past
   * recovery, refused): what was emitted stays, and the handler must not emit a half-read entry.
   */
  end(truncated: boolean): ParseOutcome;
}

export interface XmlFormat {
  readonly kind: 'xml';
  readonly name: string;
  readonly roots: readonly XmlRootMatch[];
  /** Called once the root element is read; a fresh handler per document. */
  createHandler(ctx: ParseContext, root: XmlElement): XmlHandler;
}

// ---------------------------------------------------------------------------------------------
// XML namespace extensions: claim namespace URIs, receive the element events inside the
// current entry (a `<url>`, an `<item>`), contribute typed data to its page.

export interface XmlExtensionHandler {
  /** A new entry begins (a fresh page draft). */
  startEntry?(draft: PageDraft): void;
  /** An element in a claimed namespace, or any element nested in one, inside the entry. */
  open(el: XmlElement, draft: PageDraft): void;
  close(el: XmlElement, text: string, draft: PageDraft): void;
  /** The entry is complete: validate and write the final data into the draft. */
  endEntry?(draft: PageDraft): void;
}

export interface XmlExtension {
  readonly name: string;
  /** Namespace URIs claimed, compared exactly. */
  readonly namespaces: readonly string[];
  /** One handler per document. `ctx.warn` reports bad content. */
  create(ctx: ParseContext): XmlExtensionHandler;
}

export type Plugin = TextFormat | XmlFormat;
