/**
 * What the XML engine makes of the events a tokenizer reports (xml-events.ts): the element
 * stack handed to the format that claims the root, the text of each element, namespaces, the
 * limits on depth, text, attributes and errors, refusals, and the document's result.
 */
import { errorText } from '../contract/errors.js';
import { noParserReason } from '../contract/parsed-document.js';
import type { ParseContext, ParseOutcome, XmlElement, XmlHandler, XmlName } from '../contract/plugin.js';
import type { Registry } from '../contract/registry.js';
import type { DocumentSitemapType } from '../contract/sitemap.js';
import type { WarningCode } from '../contract/warning.js';
import { objectArray } from './object-array.js';
import { isBlank, STOP, type XmlEvents } from './xml-events.js';
import { NamespaceScopes } from './xml-namespaces.js';

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

export interface XmlEngineResult {
  readonly outcome: ParseOutcome;
  /** The document ended early: cut off, malformed past recovery, refused or stopped. */
  readonly truncated: boolean;
  /** Name of the format that read the document, `null` when no format claimed it. */
  readonly format: string | null;
  /** The root element's name, `null` when the document ended before one. */
  readonly root: XmlName | null;
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

// Malformed-XML warnings kept per document; the count of the rest is reported at the end.
const MAX_ERROR_WARNINGS = 10;

// A tokenizer cuts text out of the piece it was given, and V8 keeps such a slice pointing at the
// whole piece: a URL kept in a page would keep 64 KiB of document alive. Shorter strings are copies.
const DETACH_FROM = 12;

export interface DocumentReaderOptions {
  url: string;
  registry: Registry;
  ctx: ParseContext;
  formatCtx: ParseContext;
  limits: XmlEngineLimits;
}

export class DocumentReader implements XmlEvents {
  readonly url: string;
  readonly #registry: Registry;
  readonly #ctx: ParseContext;
  readonly #formatCtx: ParseContext;
  // The limits, each a number field: read on every element.
  readonly #maxDepth: number;
  readonly #maxTextLength: number;
  readonly #maxAttributes: number;
  readonly #maxErrors: number;
  readonly maxMarkupLength: number;

  #handler: XmlHandler | null = null;
  /** Copy long texts before handing them over (unless the handler copies what it keeps). */
  #detach = true;
  formatName: string | null = null;
  /** Set when the parse ended early; `#invalid` when no format will read the document. */
  stopped = false;
  truncated = false;
  #invalid: string | null = null;
  /** The input is over: a syntax error now is a cut, not damage. */
  ending = false;

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

  #errors = 0;
  /** Set once the root element has closed: the document proper is over. */
  #rootName: string | null = null;
  #rootElement: XmlName | null = null;

  constructor(options: DocumentReaderOptions) {
    this.url = options.url;
    this.#registry = options.registry;
    this.#ctx = options.ctx;
    this.#formatCtx = options.formatCtx;
    this.#maxDepth = options.limits.maxDepth;
    this.#maxTextLength = options.limits.maxTextLength;
    this.maxMarkupLength = options.limits.maxMarkupLength;
    this.#maxAttributes = options.limits.maxAttributes;
    this.#maxErrors = options.limits.maxErrors;
    this.#ns = new NamespaceScopes((code, message) => this.warn(code, message));
  }

  get type(): DocumentSitemapType | null {
    return this.#handler?.type ?? null;
  }

  /** Ends the handler and says what the document was. */
  finish(): XmlEngineResult {
    if (this.#errors > MAX_ERROR_WARNINGS) {
      this.warn(
        'malformed-xml',
        `${this.#errors - MAX_ERROR_WARNINGS} more XML syntax errors were recovered from`,
      );
    }
    const outcome: ParseOutcome =
      this.#handler !== null
        ? endHandler(this.#handler, this)
        : {
            type: 'InvalidSitemap',
            reason: this.#invalid ?? noParserReason(this.url, 'no root element'),
          };
    return { outcome, truncated: this.truncated, format: this.formatName, root: this.#rootElement };
  }

  /** Ends the parse early from inside a tokenizer event. */
  #halt(): never {
    this.stopped = true;
    this.truncated = true;
    throw STOP;
  }

  warn(code: WarningCode, message: string): void {
    this.#ctx.warn(code, message);
  }

  // ------------------------------------------------------------------------------------------
  // Tokenizer events (XmlEvents)

  startElement(name: string, attrs: Record<string, string>): void {
    const d = this.#depth;
    if (d === 0 && this.#rootName !== null) {
      this.warn(
        'malformed-xml',
        `Element <${name}> after the end of the root element <${this.#rootName}>; it and everything after it were ignored`,
      );
      this.stopped = true;
      throw STOP;
    }
    if (d >= this.#maxDepth) {
      this.warn('limit', `Elements nested deeper than ${this.#maxDepth} levels; parsing stopped`);
      this.#halt();
    }
    if (this.#pendingXmlns) {
      this.#pendingXmlns = false;
      this.#ns.declare(attrs, d);
    }
    this.#attributes = 0;
    this.#ns.resolve(name);
    const ns = this.#ns.ns;
    const local = this.#ns.local;
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
      this.#invalid = noParserReason(this.url, `unsupported root element <${name}>${where}`);
      this.stopped = true;
      throw STOP;
    }
    this.formatName = format.name;
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
      this.warn(
        'limit',
        `Character data of <${el.local}> longer than ${max} characters; the rest was dropped`,
      );
    }
  }

  attribute(name: string): void {
    if (++this.#attributes > this.#maxAttributes) {
      this.warn('limit', `An element has more than ${this.#maxAttributes} attributes; parsing stopped`);
      this.#halt();
    }
    if (name.charCodeAt(0) === 0x78 && name.startsWith('xmlns')) this.#pendingXmlns = true;
  }

  error(message: string): void {
    if (this.ending) {
      // The input ended inside the document: a cut, not damage.
      if (!this.truncated) {
        this.truncated = true;
        this.warn('truncated', `The document ended early (${message}); entries read before the cut are kept`);
      }
      return;
    }
    if (this.#rootName !== null) {
      this.warn('malformed-xml', `Content after the end of the root element <${this.#rootName}> was ignored`);
      this.stopped = true;
      throw STOP;
    }
    this.#errors++;
    if (this.#errors <= MAX_ERROR_WARNINGS)
      this.warn('malformed-xml', `XML syntax error recovered from: ${message}`);
    if (this.#errors > this.#maxErrors && this.#errors > this.#elements) {
      this.warn('malformed-xml', `Too many XML syntax errors (${this.#errors}); parsing stopped`);
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
    this.warn(html ? 'not-a-sitemap' : 'doctype-refused', message);
    if (this.#handler === null) this.#invalid = noParserReason(this.url, message);
    this.#halt();
  }

  markupTooLong(): never {
    this.warn('limit', `A markup token is longer than ${this.maxMarkupLength} characters; parsing stopped`);
    this.#halt();
  }

  /** A format (or its handler) threw: the parse stops there. */
  pluginFailed(error: unknown): void {
    this.stopped = true;
    this.truncated = true;
    this.warn('plugin-error', `Format ${this.formatName ?? '(none)'} failed: ${errorText(error)}`);
  }
}

/** The handler's end, a throw from it turned into a warning and an `InvalidSitemap`. */
function endHandler(handler: XmlHandler, reader: DocumentReader): ParseOutcome {
  try {
    return handler.end(reader.truncated);
  } catch (error) {
    reader.warn(
      'plugin-error',
      `Format ${reader.formatName} failed at the end of the document: ${errorText(error)}`,
    );
    return {
      type: 'InvalidSitemap',
      reason: noParserReason(reader.url, `format ${reader.formatName} failed`),
    };
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
