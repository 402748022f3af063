/**
 * The streaming XML engine: decoded text in, element events out to the format that claims the
 * root element. A tokenizer reports what it reads (xml-events.ts): the fast path (xml-fast.ts)
 * while the document stays within what it takes, sax (xml-sax.ts, the engine of record) for
 * the rest of a document that leaves it, or for the whole document when asked. Namespaces are
 * resolved here (xml-namespaces.ts). Memory is bounded whatever the document: character data,
 * markup buffers and nesting are capped, and nothing keeps the document.
 */
import { errorText } from '../contract/errors.js';
import { noParserReason } from '../contract/parsed-document.js';
import type { ParseContext, ParseOutcome, XmlElement, XmlHandler, XmlName } from '../contract/plugin.js';
import type { Registry } from '../contract/registry.js';
import type { DocumentSitemapType } from '../contract/sitemap.js';
import type { WarningCode } from '../contract/warning.js';
import { objectArray } from './object-array.js';
import { isBlank, STOP, type XmlEvents } from './xml-events.js';
import { FastTokenizer } from './xml-fast.js';
import { NamespaceScopes } from './xml-namespaces.js';
import { FLUSH_TEXT, SaxTokenizer } from './xml-sax.js';

export interface XmlEngineLimits {
  /** Deepest element nesting read (the root is depth 0); deeper stops the parse. Default 256. */
  maxDepth: number;
  /** Character data kept per element; the excess is dropped with a warning. Default 1 MiB. */
  maxTextLength: number;
  /**
   * Longest markup token (tag name, attribute value, comment, declaration); longer stops the
   * parse. Default 1 MiB.
   */
  maxMarkupLength: number;
  /** Attributes on one element; more stops the parse. Default 1,000. */
  maxAttributes: number;
  /**
   * Syntax errors recovered from before giving up, once they also outnumber the elements read
   * (a document that is mostly damage). Default 1,000.
   */
  maxErrors: number;
}

export const DEFAULT_XML_LIMITS: Readonly<XmlEngineLimits> = {
  maxDepth: 256,
  maxTextLength: 1024 * 1024,
  maxMarkupLength: 1024 * 1024,
  maxAttributes: 1000,
  maxErrors: 1000,
};

export interface XmlEngineOptions {
  url: string;
  registry: Registry;
  /** Receives the engine's own warnings; handed to the format's `createHandler` too, unless `formatCtx` is set. */
  ctx: ParseContext;
  /** Handed to the format's `createHandler` instead of `ctx` (an observed context). */
  formatCtx?: ParseContext;
  limits?: Partial<XmlEngineLimits>;
  /**
   * `'auto'` (the default) reads with the fast path while the document allows and hands the
   * rest to sax; `'sax'` reads the whole document with sax, as before the fast path existed.
   */
  tokenizer?: XmlTokenizerChoice;
}

/** Which tokenizer reads an XML document (see `XmlEngineOptions.tokenizer`). */
export type XmlTokenizerChoice = 'auto' | 'sax';

export interface XmlEngineResult {
  readonly outcome: ParseOutcome;
  /** The document ended early: cut off, malformed past recovery, refused or stopped. */
  readonly truncated: boolean;
  /** Name of the format that read the document, `null` when no format claimed it. */
  readonly format: string | null;
  /** The root element's name, `null` when the document ended before one. */
  readonly root: XmlName | null;
}

export interface XmlEngine {
  /** Feeds decoded text, in pieces of any size. Ignored once the engine has stopped. */
  write(text: string): void;
  /** The input is over (or the caller stopped it): ends the handler and reports the outcome. */
  end(): XmlEngineResult;
  /** Stops reading; the handler ends as truncated. */
  stop(): void;
  /** True once more input would be ignored (the root closed, a limit hit, a refusal, a stop). */
  readonly done: boolean;
  /** The name of the format reading the document, once the root element is claimed. */
  readonly format: string | null;
  /** The node type the handler announced (`XmlHandler.type`), if any. */
  readonly type: DocumentSitemapType | null;
  /** The tokenizer reading now: `'fast'` until sax takes over (or from the start, if asked). */
  readonly tokenizer: 'fast' | 'sax';
}

type MutableElement = { -readonly [K in keyof XmlElement]: XmlElement[K] };

/** An open element as handlers see it; a class, so every one has the same shape from the start. */
class OpenElement implements MutableElement {
  constructor(
    public ns: string,
    public local: string,
    public attrs: Record<string, string>,
    public depth: number,
  ) {}
}

// Writing the tokenizer bounded pieces lets sax's buffers be inspected (and bounded) between
// pieces; the fast path is written the same pieces, so when sax takes over from it, sax is
// written what it would have been written alone.
const WRITE_SLICE = 64 * 1024;
// The first piece of a document longer than PRIME_MIN is split after the first tag end past
// PRIME_AT (see `write`).
const PRIME_MIN = 1024;
const PRIME_AT = 256;
// Malformed-XML warnings kept per document; the count of the rest is reported at the end.
const MAX_ERROR_WARNINGS = 10;

// A tokenizer cuts text out of the piece it was given, and V8 keeps such a slice pointing at the
// whole piece: a URL kept in a page would keep 64 KiB of document alive. Shorter strings are copies.
const DETACH_FROM = 12;

export function createXmlEngine(options: XmlEngineOptions): XmlEngine {
  if (!engineSettled) settleEngine();
  return new Engine(options);
}

let engineSettled = false;

/**
 * V8 compiles a field that has held one value so far as a constant, and throws the compiled
 * code away when the field changes: the engine's root name, handler and format name change
 * when a document starts or ends, the first time in the middle of a thread's first large
 * document, after `startElement` and the fast path got hot. Two throwaway engines, taken through a
 * tiny document each, make those fields variable first, once per thread (as sax's, xml-sax.ts).
 */
function settleEngine(): void {
  engineSettled = true;
  const handler: XmlHandler = {
    open() {},
    close() {},
    end: () => ({ type: 'InvalidSitemap', reason: '' }),
  };
  const format = { name: '', createHandler: () => handler };
  const registry = { xmlFormatFor: () => format } as unknown as Registry;
  const ctx = { warn() {} } as unknown as ParseContext;
  for (let i = 0; i < 2; i++) {
    const engine = new Engine({ url: '', registry, ctx });
    engine.write('<a b="c"><d>e</d><f/></a>');
    engine.end();
  }
}

class Engine implements XmlEngine, XmlEvents {
  readonly #url: string;
  readonly #registry: Registry;
  readonly #ctx: ParseContext;
  readonly #formatCtx: ParseContext;
  // The limits, each a number field: read on every element.
  readonly #maxDepth: number;
  readonly #maxTextLength: number;
  readonly #maxMarkupLength: number;
  readonly #maxAttributes: number;
  readonly #maxErrors: number;
  /** The fast path while it reads the document; null once sax reads it. */
  #fast: FastTokenizer | null = null;
  #sax: SaxTokenizer | null = null;

  #handler: XmlHandler | null = null;
  /** Copy long texts before handing them over (unless the handler copies what it keeps). */
  #detach = true;
  #formatName: string | null = null;
  #result: XmlEngineResult | null = null;
  /** Set when the parse ended early; `#invalid` when no format will read the document. */
  #stopped = false;
  #truncated = false;
  #invalid: string | null = null;
  #ending = false;

  // Element stack: `#depth` open elements, `#stack[d]` the element at depth d.
  #depth = 0;
  #stack: MutableElement[] = objectArray();
  #elements = 0;
  readonly #ns: NamespaceScopes;
  #pendingXmlns = false;
  #attributes = 0;

  // Character data since the last tag.
  #text = '';
  #textCapped = false;
  /** Whether the first piece was split (see `write`). */
  #primed = false;

  #errors = 0;
  /** Set once the root element has closed: the document proper is over. */
  #rootName: string | null = null;
  #rootElement: XmlName | null = null;

  constructor(options: XmlEngineOptions) {
    this.#url = options.url;
    this.#registry = options.registry;
    this.#ctx = options.ctx;
    this.#formatCtx = options.formatCtx ?? options.ctx;
    const limits = { ...DEFAULT_XML_LIMITS, ...options.limits };
    this.#maxDepth = limits.maxDepth;
    this.#maxTextLength = limits.maxTextLength;
    this.#maxMarkupLength = limits.maxMarkupLength;
    this.#maxAttributes = limits.maxAttributes;
    this.#maxErrors = limits.maxErrors;
    this.#ns = new NamespaceScopes((code, message) => this.#warn(code, message));
    if (options.tokenizer === 'sax') this.#sax = new SaxTokenizer(this, this.#maxMarkupLength);
    else this.#fast = new FastTokenizer(this, Math.min(FLUSH_TEXT, this.#maxMarkupLength));
  }

  get done(): boolean {
    return this.#stopped;
  }

  get format(): string | null {
    return this.#formatName;
  }

  get type(): DocumentSitemapType | null {
    return this.#handler?.type ?? null;
  }

  get tokenizer(): 'fast' | 'sax' {
    return this.#fast === null ? 'sax' : 'fast';
  }

  write(text: string): void {
    if (this.#stopped) return;
    try {
      if (!this.#primed) {
        this.#primed = true;
        // sax's `write` is one large function that V8 compiles while it runs the first piece
        // (on-stack replacement); the code after its loop, and a piece that ends inside text,
        // have then never run, and the first time they do the compiled code is thrown away and
        // rebuilt, once per path. A short first piece ending just past a tag runs those paths
        // before the compiler looks: a large document's first parse costs about a tenth less.
        const cut = text.length > PRIME_MIN ? text.indexOf('>', PRIME_AT) + 2 : 0;
        if (cut > 1) {
          this.#writePiece(text.slice(0, cut));
          if (this.#stopped) return;
          text = text.slice(cut);
        }
      }
      if (text.length <= WRITE_SLICE) this.#writePiece(text);
      else {
        for (let i = 0; i < text.length && !this.#stopped; i += WRITE_SLICE) {
          this.#writePiece(text.slice(i, i + WRITE_SLICE));
        }
      }
    } catch (error) {
      if (error !== STOP) this.#pluginFailed(error);
    }
  }

  #writePiece(piece: string): void {
    const fast = this.#fast;
    if (fast === null) (this.#sax as SaxTokenizer).write(piece);
    else if (!fast.write(piece)) this.#toSax(fast);
  }

  /** sax takes the document over where the fast path stopped. */
  #toSax(fast: FastTokenizer): void {
    this.#fast = null;
    const sax = new SaxTokenizer(this, this.#maxMarkupLength);
    this.#sax = sax;
    sax.resume(fast);
    for (const piece of fast.replay()) {
      sax.write(piece);
      if (this.#stopped) return;
    }
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#truncated = true;
  }

  end(): XmlEngineResult {
    if (this.#result !== null) return this.#result;
    if (!this.#stopped) {
      try {
        const fast = this.#fast;
        if (fast !== null && !fast.end()) this.#toSax(fast);
        if (this.#fast === null && !this.#stopped) {
          this.#ending = true;
          (this.#sax as SaxTokenizer).close();
        }
      } catch (error) {
        if (error !== STOP) this.#pluginFailed(error);
      }
      this.#stopped = true;
    }
    return this.#finish();
  }

  #finish(): XmlEngineResult {
    if (this.#errors > MAX_ERROR_WARNINGS) {
      this.#warn(
        'malformed-xml',
        `${this.#errors - MAX_ERROR_WARNINGS} more XML syntax errors were recovered from`,
      );
    }
    let outcome: ParseOutcome;
    if (this.#handler !== null) {
      try {
        outcome = this.#handler.end(this.#truncated);
      } catch (error) {
        this.#warn(
          'plugin-error',
          `Format ${this.#formatName} failed at the end of the document: ${errorText(error)}`,
        );
        outcome = {
          type: 'InvalidSitemap',
          reason: noParserReason(this.#url, `format ${this.#formatName} failed`),
        };
      }
    } else {
      outcome = {
        type: 'InvalidSitemap',
        reason: this.#invalid ?? noParserReason(this.#url, 'no root element'),
      };
    }
    this.#result = { outcome, truncated: this.#truncated, format: this.#formatName, root: this.#rootElement };
    return this.#result;
  }

  /** Ends the parse early from inside a tokenizer event. */
  #halt(): never {
    this.#stopped = true;
    this.#truncated = true;
    throw STOP;
  }

  #warn(code: WarningCode, message: string): void {
    this.#ctx.warn(code, message);
  }

  // ------------------------------------------------------------------------------------------
  // Tokenizer events (XmlEvents)

  startElement(name: string, attrs: Record<string, string>): void {
    const d = this.#depth;
    if (d === 0 && this.#rootName !== null) {
      this.#warn(
        'malformed-xml',
        `Element <${name}> after the end of the root element <${this.#rootName}>; it and everything after it were ignored`,
      );
      this.#stopped = true;
      throw STOP;
    }
    if (d >= this.#maxDepth) {
      this.#warn('limit', `Elements nested deeper than ${this.#maxDepth} levels; parsing stopped`);
      this.#halt();
    }
    if (this.#pendingXmlns) {
      this.#pendingXmlns = false;
      this.#ns.declare(attrs, d);
    }
    this.#attributes = 0;
    const colon = name.indexOf(':');
    let ns: string;
    let local: string;
    if (colon === -1) {
      ns = this.#ns.defaultNs;
      local = name;
    } else {
      const prefix = name.slice(0, colon);
      const bound = this.#ns.lookup(prefix);
      if (bound === undefined) {
        // Undeclared prefix: keep the written name, in no namespace, so it can never pass
        // for an element of a real namespace.
        this.#ns.unbound(prefix, name);
        ns = '';
        local = name;
      } else {
        ns = bound;
        local = name.slice(colon + 1);
      }
    }
    // One object per depth, refilled for each element: a large document has hundreds of
    // thousands of elements, and handlers read an element only while it is open (plugin.ts).
    // The root's object is never refilled: handlers are created with it.
    let el = this.#stack[d] as MutableElement | undefined;
    if (el === undefined || d === 0) {
      el = new OpenElement(ns, local, attrs, d);
      this.#stack[d] = el;
    } else {
      el.ns = ns;
      el.local = local;
      el.attrs = attrs;
    }
    this.#depth = d + 1;
    this.#elements++;
    this.#text = '';
    this.#textCapped = false;
    if (d === 0) {
      this.#rootElement = { ns: el.ns, local: el.local };
      this.#root(el, name);
    } else (this.#handler as XmlHandler).open(el);
  }

  endElement(): void {
    const d = this.#depth - 1;
    if (d < 0) return;
    this.#depth = d;
    const el = this.#stack[d] as MutableElement;
    const text = this.#text;
    this.#text = '';
    this.#textCapped = false;
    if (d === 0) {
      // The document is complete. Reading goes on only to tell the caller about anything but
      // whitespace after it (a tokenizer error after it or a second root element stops the parse).
      this.#rootName = el.ns === '' ? el.local : `${el.local} (${el.ns})`;
      return;
    }
    (this.#handler as XmlHandler).close(
      el,
      this.#detach && text.length > DETACH_FROM ? detachString(text) : text,
    );
    this.#ns.close(d);
  }

  #root(el: XmlElement, name: string): void {
    const format = this.#registry.xmlFormatFor(el.ns, el.local);
    if (format === undefined) {
      const where = el.ns === '' ? '' : ` in namespace ${el.ns}`;
      this.#invalid = noParserReason(this.#url, `unsupported root element <${name}>${where}`);
      this.#stopped = true;
      throw STOP;
    }
    this.#formatName = format.name;
    this.#handler = format.createHandler(this.#formatCtx, el);
    this.#detach = this.#handler.detachesText !== true;
  }

  text(t: string): void {
    if (this.#depth === 0) return;
    const have = this.#text.length;
    const max = this.#maxTextLength;
    if (have + t.length <= max) {
      this.#text = have === 0 ? t : this.#text + t;
    } else if (!this.#textCapped) {
      // Whitespace between elements (a padded or bomb-like document) carries nothing: dropping
      // it past the cap loses no data, so it is not worth a warning.
      if (isBlank(t)) return;
      this.#textCapped = true;
      this.#text += t.slice(0, max - have);
      const el = this.#stack[this.#depth - 1] as MutableElement;
      this.#warn(
        'limit',
        `Character data of <${el.local}> longer than ${max} characters; the rest was dropped`,
      );
    }
  }

  attribute(name: string): void {
    if (++this.#attributes > this.#maxAttributes) {
      this.#warn('limit', `An element has more than ${this.#maxAttributes} attributes; parsing stopped`);
      this.#halt();
    }
    if (name.charCodeAt(0) === 0x78 && name.startsWith('xmlns')) this.#pendingXmlns = true;
  }

  error(message: string): void {
    if (this.#ending) {
      // The input ended inside the document: a cut, not damage.
      if (!this.#truncated) {
        this.#truncated = true;
        this.#warn(
          'truncated',
          `The document ended early (${message}); entries read before the cut are kept`,
        );
      }
      return;
    }
    if (this.#rootName !== null) {
      this.#warn(
        'malformed-xml',
        `Content after the end of the root element <${this.#rootName}> was ignored`,
      );
      this.#stopped = true;
      throw STOP;
    }
    this.#errors++;
    if (this.#errors <= MAX_ERROR_WARNINGS)
      this.#warn('malformed-xml', `XML syntax error recovered from: ${message}`);
    if (this.#errors > this.#maxErrors && this.#errors > this.#elements) {
      this.#warn('malformed-xml', `Too many XML syntax errors (${this.#errors}); parsing stopped`);
      this.#halt();
    }
  }

  declaration(decl: string): void {
    if (/^\s*ENTITY/i.test(decl)) this.refuse('ENTITY');
    this.error(`Unsupported declaration <!${decl.slice(0, 40)}>`);
  }

  refuse(what: 'DOCTYPE' | 'ENTITY', doctype = ''): never {
    // An HTML page served where a sitemap was expected is a wrong page, not an attack.
    const html = what === 'DOCTYPE' && /^\s*html\b/i.test(doctype);
    const message = html
      ? 'HTML page, not a sitemap (it declares <!DOCTYPE html>)'
      : `The document contains a ${what} declaration, refused for security (entity expansion, external entities)`;
    this.#warn(html ? 'not-a-sitemap' : 'doctype-refused', message);
    if (this.#handler === null) this.#invalid = noParserReason(this.#url, message);
    this.#halt();
  }

  markupTooLong(): never {
    this.#warn('limit', `A markup token is longer than ${this.#maxMarkupLength} characters; parsing stopped`);
    this.#halt();
  }

  #pluginFailed(error: unknown): void {
    this.#stopped = true;
    this.#truncated = true;
    this.#warn('plugin-error', `Format ${this.#formatName ?? '(none)'} failed: ${errorText(error)}`);
  }
}

/**
 * A copy of `s` that shares no memory with the string it was cut from. V8 keeps a substring
 * as a view of its parent; a value kept for long (a page URL) should not pin a whole document
 * chunk. Concatenating forces a fresh flat string, the slice drops the extra character.
 */
export function detachString(s: string): string {
  return ` ${s}`.slice(1);
}
