/**
 * The streaming XML engine: decoded text in, element events out to the format that claims the
 * root element. sax in strict mode does the tokenising (no positions, no `xmlns` option: it
 * halves sax's speed); namespaces are resolved here by a scope stack that only grows when an
 * element declares one. Memory is bounded whatever the document: character data, markup
 * buffers and nesting are capped, and nothing keeps the document.
 */
import { errorText } from '../contract/errors.js';
import { noParserReason } from '../contract/parsed-document.js';
import type { ParseContext, ParseOutcome, XmlElement, XmlHandler, XmlName } from '../contract/plugin.js';
import type { Registry } from '../contract/registry.js';
import type { DocumentSitemapType } from '../contract/sitemap.js';
import type { WarningCode } from '../contract/warning.js';
import { objectArray } from './object-array.js';
import { type SAXOptions, saxModule } from './sax-module.cjs';

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
}

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
}

type MutableElement = { -readonly [K in keyof XmlElement]: XmlElement[K] };

type SaxEvents = Pick<
  SaxInternals,
  | 'onopentag'
  | 'onclosetag'
  | 'ontext'
  | 'oncdata'
  | 'onattribute'
  | 'onerror'
  | 'ondoctype'
  | 'onsgmldeclaration'
>;

/** A strict sax parser with the engine's options; its handlers always set in this order (one map). */
function saxParser(events: SaxEvents): SaxInternals {
  const sax = saxModule();
  if (S_SGML_DECL === -1) readSaxStates(sax);
  const p = sax.parser(true, {
    position: false,
    strictEntities: true,
  } as SAXOptions) as unknown as SaxInternals;
  // sax's open-tag stack: its compiled `openTag` pushes tag objects (object-array.ts).
  p.tags = objectArray();
  p.attribList = new NoAttribList();
  // sax looks this event up for every element; an own property answers at once, where a missing
  // one is searched for on the parser, its prototype and Object.prototype (a generic lookup each).
  p.onopentagstart = undefined;
  p.onopentag = events.onopentag;
  p.onclosetag = events.onclosetag;
  p.ontext = events.ontext;
  p.oncdata = events.oncdata;
  p.onattribute = events.onattribute;
  p.onerror = events.onerror;
  p.ondoctype = events.ondoctype;
  p.onsgmldeclaration = events.onsgmldeclaration;
  return p;
}

let saxSettled = false;

/**
 * Long enough for V8 to give sax's functions their feedback vectors (allocated only once a
 * function has run a while), so what this document shows them, such as the root's close and the
 * end of input, is known to the optimising compiler later; ~1.5 KB, parsed in well under 1 ms.
 */
const PRIMER = `<a>${'<b c="d">e</b>'.repeat(100)}</a>`;

/**
 * V8's optimising compiler treats an object field that has held one value so far as a constant:
 * sax's options object, its handlers, `closedRoot` and `closed` all look constant until a second
 * parser is made or the first document ends. When that happens after sax's `write` got hot (a
 * parse worker's first document is a large urlset; the calling thread's, when a walk starts at
 * one), the compiled `write` (both versions), `openTag`, `closeTag`, `closeText` and `emitNode`
 * are thrown away and compiled again: the largest compile jobs of a parse, twice. Two throwaway
 * parsers, one of them taken through a whole document, make those fields variable first, once
 * per thread, while nothing is compiled yet.
 */
function settleSax(): void {
  saxSettled = true;
  const none = () => {};
  const events: SaxEvents = {
    onopentag: none,
    onclosetag: none,
    ontext: none,
    oncdata: none,
    onattribute: none,
    onerror: none,
    ondoctype: none,
    onsgmldeclaration: none,
  };
  saxParser(events);
  const p = saxParser({ ...events, onopentag: () => {} });
  p.write(PRIMER);
  p.close();
}

/**
 * What sax keeps in `attribList`: attributes held back for its `xmlns` option, which we never
 * set. Without it sax pushes nothing, yet clears the list three times per element
 * (`attribList.length = 0`, a call into the runtime for an array: ~5 % of the instructions of
 * a urlset's parse, callgrind) and asks it about every attribute (never a duplicate: sax's own
 * `attributes` check finds those). A plain object answers both at the cost of a field store.
 */
class NoAttribList {
  length = 0;
  indexOf(_name: string): number {
    return -1;
  }
}

/** sax's parser fields we read to bound its buffers (not in its type declarations). */
interface SaxInternals {
  tags: object[];
  attribList: { length: number; indexOf(name: string): number };
  onopentagstart: undefined;
  state: number;
  error: Error | null;
  textNode: string;
  cdata: string;
  comment: string;
  sgmlDecl: string;
  doctype: string | boolean;
  tagName: string;
  attribName: string;
  attribValue: string;
  procInstName: string;
  procInstBody: string;
  entity: string;
  write(s: string): unknown;
  close(): unknown;
  onerror: (e: Error) => void;
  ontext: (t: string) => void;
  oncdata: (t: string) => void;
  onopentag: (tag: { name: string; attributes: Record<string, string> }) => void;
  onclosetag: (name: string) => void;
  onattribute: (attr: { name: string; value: string }) => void;
  ondoctype: (doctype: string) => void;
  onsgmldeclaration: (decl: string) => void;
}

// sax's parser states, read when the first parser is made (sax is loaded then, not with core).
let S_SGML_DECL = -1;
let S_SGML_DECL_QUOTED = -1;
let S_DOCTYPE_FIRST = -1;
let S_DOCTYPE_LAST = -1;

function readSaxStates(sax: unknown): void {
  const STATE = (sax as { STATE: Record<string, number> }).STATE;
  S_SGML_DECL = STATE.SGML_DECL as number;
  S_SGML_DECL_QUOTED = STATE.SGML_DECL_QUOTED as number;
  S_DOCTYPE_FIRST = STATE.DOCTYPE as number;
  S_DOCTYPE_LAST = STATE.DOCTYPE_DTD_QUOTED as number;
}

/** Thrown from inside sax callbacks to leave `write` at once; never escapes the engine. */
const STOP = Symbol('stop-parsing');

// Writing sax bounded pieces lets us inspect (and bound) its buffers between pieces.
const WRITE_SLICE = 64 * 1024;
// The first piece of a document longer than PRIME_MIN is split after the first tag end past
// PRIME_AT (see `write`).
const PRIME_MIN = 1024;
const PRIME_AT = 256;
// sax holds text until the next tag; past this we move it into our capped accumulator.
const FLUSH_TEXT = 64 * 1024;
// Malformed-XML warnings kept per document; the count of the rest is reported at the end.
const MAX_ERROR_WARNINGS = 10;

// sax cuts text out of the piece it was given, and V8 keeps such a slice pointing at the whole
// piece: a URL kept in a page would keep 64 KiB of document alive. Shorter strings are copies.
const DETACH_FROM = 12;

const XML_NS = 'http://www.w3.org/XML/1998/namespace';

export function createXmlEngine(options: XmlEngineOptions): XmlEngine {
  return new Engine(options);
}

class Engine implements XmlEngine {
  readonly #url: string;
  readonly #registry: Registry;
  readonly #ctx: ParseContext;
  readonly #formatCtx: ParseContext;
  readonly #limits: XmlEngineLimits;
  readonly #p: SaxInternals;

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
  #stack: MutableElement[] = [];
  #elements = 0;

  // Namespace scopes: the current default namespace and prefix bindings, plus an undo log
  // written only by elements that declare namespaces.
  #defaultNs = '';
  #prefixes = new Map<string, string>([['xml', XML_NS]]);
  #undoDepth: number[] = [];
  #undoPrefix: string[] = [];
  #undoPrevious: (string | undefined)[] = [];
  #unboundWarned: Set<string> | null = null;
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
    this.#limits = { ...DEFAULT_XML_LIMITS, ...options.limits };
    if (!saxSettled) settleSax();
    this.#p = saxParser({
      onopentag: (tag) => this.#open(tag.name, tag.attributes),
      onclosetag: () => this.#close(),
      ontext: (t) => this.#addText(t),
      oncdata: (t) => this.#addText(t),
      onattribute: (attr) => this.#attribute(attr.name),
      onerror: (e) => this.#error(e),
      ondoctype: (doctype) => this.#refuse('DOCTYPE', doctype),
      onsgmldeclaration: (decl) => this.#declaration(decl),
    });
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
          this.#p.write(text.slice(0, cut));
          this.#inspect();
          if (this.#stopped) return;
          text = text.slice(cut);
        }
      }
      if (text.length <= WRITE_SLICE) {
        this.#p.write(text);
        this.#inspect();
      } else {
        for (let i = 0; i < text.length && !this.#stopped; i += WRITE_SLICE) {
          this.#p.write(text.slice(i, i + WRITE_SLICE));
          this.#inspect();
        }
      }
    } catch (error) {
      if (error !== STOP) this.#pluginFailed(error);
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
      this.#ending = true;
      try {
        this.#p.close();
      } catch (error) {
        if (error !== STOP) this.#pluginFailed(error);
      }
      this.#stopped = true;
    }
    return this.#finish();
  }

  #finish(): XmlEngineResult {
    if (this.#result !== null) return this.#result;
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

  /** Ends the parse early from inside a sax callback. */
  #halt(): never {
    this.#stopped = true;
    this.#truncated = true;
    throw STOP;
  }

  #warn(code: WarningCode, message: string): void {
    this.#ctx.warn(code, message);
  }

  // ------------------------------------------------------------------------------------------
  // sax events

  #open(name: string, attrs: Record<string, string>): void {
    const d = this.#depth;
    if (d === 0 && this.#rootName !== null) {
      this.#warn(
        'malformed-xml',
        `Element <${name}> after the end of the root element <${this.#rootName}>; it and everything after it were ignored`,
      );
      this.#stopped = true;
      throw STOP;
    }
    if (d >= this.#limits.maxDepth) {
      this.#warn('limit', `Elements nested deeper than ${this.#limits.maxDepth} levels; parsing stopped`);
      this.#halt();
    }
    if (this.#pendingXmlns) {
      this.#pendingXmlns = false;
      this.#declare(attrs, d);
    }
    this.#attributes = 0;
    const colon = name.indexOf(':');
    let ns: string;
    let local: string;
    if (colon === -1) {
      ns = this.#defaultNs;
      local = name;
    } else {
      const prefix = name.slice(0, colon);
      const bound = this.#prefixes.get(prefix);
      if (bound === undefined) {
        // Undeclared prefix: keep the written name, in no namespace, so it can never pass
        // for an element of a real namespace.
        this.#unbound(prefix, name);
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
      el = { ns, local, attrs, depth: d };
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

  #close(): void {
    const d = this.#depth - 1;
    if (d < 0) return;
    this.#depth = d;
    const el = this.#stack[d];
    const text = this.#text;
    this.#text = '';
    this.#textCapped = false;
    if (d === 0) {
      // The document is complete. Reading goes on only to tell the caller about anything but
      // whitespace after it (sax reports stray text; a second root element stops the parse).
      this.#rootName = el.ns === '' ? el.local : `${el.local} (${el.ns})`;
      return;
    }
    (this.#handler as XmlHandler).close(
      el,
      this.#detach && text.length > DETACH_FROM ? detachString(text) : text,
    );
    const undo = this.#undoDepth;
    if (undo.length > 0 && undo[undo.length - 1] === d) this.#popScope(d);
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

  #addText(t: string): void {
    if (this.#depth === 0) return;
    const have = this.#text.length;
    if (have + t.length <= this.#limits.maxTextLength) {
      this.#text = have === 0 ? t : this.#text + t;
    } else if (!this.#textCapped) {
      // Whitespace between elements (a padded or bomb-like document) carries nothing: dropping
      // it past the cap loses no data, so it is not worth a warning.
      if (isBlank(t)) return;
      this.#textCapped = true;
      this.#text += t.slice(0, this.#limits.maxTextLength - have);
      const el = this.#stack[this.#depth - 1];
      this.#warn(
        'limit',
        `Character data of <${el.local}> longer than ${this.#limits.maxTextLength} characters; the rest was dropped`,
      );
    }
  }

  #attribute(name: string): void {
    if (++this.#attributes > this.#limits.maxAttributes) {
      this.#warn(
        'limit',
        `An element has more than ${this.#limits.maxAttributes} attributes; parsing stopped`,
      );
      this.#halt();
    }
    if (name.charCodeAt(0) === 0x78 && name.startsWith('xmlns')) this.#pendingXmlns = true;
  }

  #error(e: Error): void {
    this.#p.error = null;
    const message = firstLine(e.message);
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
    if (this.#errors > this.#limits.maxErrors && this.#errors > this.#elements) {
      this.#warn('malformed-xml', `Too many XML syntax errors (${this.#errors}); parsing stopped`);
      this.#halt();
    }
  }

  #declaration(decl: string): void {
    if (/^\s*ENTITY/i.test(decl)) this.#refuse('ENTITY');
    this.#error(new Error(`Unsupported declaration <!${decl.slice(0, 40)}>`));
  }

  #refuse(what: 'DOCTYPE' | 'ENTITY', doctype = ''): never {
    // An HTML page served where a sitemap was expected is a wrong page, not an attack.
    const html = what === 'DOCTYPE' && /^\s*html\b/i.test(doctype);
    const message = html
      ? 'HTML page, not a sitemap (it declares <!DOCTYPE html>)'
      : `The document contains a ${what} declaration, refused for security (entity expansion, external entities)`;
    this.#warn(html ? 'not-a-sitemap' : 'doctype-refused', message);
    if (this.#handler === null) this.#invalid = noParserReason(this.#url, message);
    this.#halt();
  }

  // ------------------------------------------------------------------------------------------
  // Namespaces

  #declare(attrs: Record<string, string>, depth: number): void {
    for (const key in attrs) {
      if (key.charCodeAt(0) !== 0x78 || !key.startsWith('xmlns')) continue;
      let prefix: string;
      if (key.length === 5) prefix = '';
      else if (key.charCodeAt(5) === 0x3a) prefix = key.slice(6);
      else continue;
      const uri = attrs[key];
      this.#undoDepth.push(depth);
      this.#undoPrefix.push(prefix);
      if (prefix === '') {
        this.#undoPrevious.push(this.#defaultNs);
        this.#defaultNs = uri;
      } else {
        this.#undoPrevious.push(this.#prefixes.get(prefix));
        // `xmlns:p=""` undeclares p (XML 1.1); treat p as unbound again.
        if (uri === '') this.#prefixes.delete(prefix);
        else this.#prefixes.set(prefix, uri);
      }
    }
  }

  #popScope(depth: number): void {
    const undoDepth = this.#undoDepth;
    while (undoDepth.length > 0 && undoDepth[undoDepth.length - 1] === depth) {
      undoDepth.pop();
      const prefix = this.#undoPrefix.pop() as string;
      const previous = this.#undoPrevious.pop();
      if (prefix === '') this.#defaultNs = previous ?? '';
      else if (previous === undefined) this.#prefixes.delete(prefix);
      else this.#prefixes.set(prefix, previous);
    }
  }

  #unbound(prefix: string, name: string): void {
    if (this.#unboundWarned === null) this.#unboundWarned = new Set();
    // Remember a bounded number: a document of ever new prefixes must not grow this set.
    if (this.#unboundWarned.has(prefix) || this.#unboundWarned.size >= 100) return;
    this.#unboundWarned.add(prefix);
    this.#warn(
      'missing-namespace',
      `Namespace prefix "${prefix}" is not declared; <${name}> is read as an element in no namespace`,
    );
  }

  // ------------------------------------------------------------------------------------------
  // Between writes: bound what sax buffers, refuse a DOCTYPE before it is buffered whole.

  #inspect(): void {
    const p = this.#p;
    const state = p.state;
    // In a DOCTYPE, or past one that sax has not finished (its internal subset can leave the
    // DOCTYPE states while `doctype` keeps the text): refuse whatever the write boundaries.
    if ((state >= S_DOCTYPE_FIRST && state <= S_DOCTYPE_LAST) || p.doctype !== '')
      this.#refuse('DOCTYPE', typeof p.doctype === 'string' ? p.doctype : '');
    if ((state === S_SGML_DECL || state === S_SGML_DECL_QUOTED) && /^\s*ENTITY/i.test(p.sgmlDecl)) {
      this.#refuse('ENTITY');
    }
    if (p.textNode.length > FLUSH_TEXT) {
      const t = p.textNode;
      p.textNode = '';
      this.#addText(t);
    }
    if (p.cdata.length > FLUSH_TEXT) {
      const t = p.cdata;
      p.cdata = '';
      this.#addText(t);
    }
    // Comments are never read: drop what sax collected of a long one.
    if (p.comment.length > FLUSH_TEXT) p.comment = '';
    const max = this.#limits.maxMarkupLength;
    if (
      p.attribValue.length > max ||
      p.tagName.length > max ||
      p.attribName.length > max ||
      p.sgmlDecl.length > max ||
      p.procInstName.length > max ||
      p.procInstBody.length > max ||
      p.entity.length > max
    ) {
      this.#warn('limit', `A markup token is longer than ${max} characters; parsing stopped`);
      this.#halt();
    }
  }

  #pluginFailed(error: unknown): void {
    this.#stopped = true;
    this.#truncated = true;
    this.#warn('plugin-error', `Format ${this.#formatName ?? '(none)'} failed: ${errorText(error)}`);
  }
}

function firstLine(message: string): string {
  const nl = message.indexOf('\n');
  return nl === -1 ? message : message.slice(0, nl);
}

/**
 * A copy of `s` that shares no memory with the string it was cut from. V8 keeps a substring
 * as a view of its parent; a value kept for long (a page URL) should not pin a whole document
 * chunk. Concatenating forces a fresh flat string, the slice drops the extra character.
 */
export function detachString(s: string): string {
  return ` ${s}`.slice(1);
}

function isBlank(t: string): boolean {
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return false;
  }
  return true;
}
