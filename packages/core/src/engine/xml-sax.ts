/**
 * sax, the engine of record: a strict sax parser set up as the engine wants it (no positions,
 * no `xmlns` option: it halves sax's speed), its buffers bounded between writes, and the V8
 * warm-ups that keep its large `write` function from being compiled twice. Every document the
 * fast path (xml-fast.ts) does not take whole is read, from some point on, by this.
 */
import { objectArray } from './object-array.js';
import { type SAXOptions, saxModule } from './sax-module.cjs';
import type { XmlEvents } from './xml-events.js';

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
  setEvents(p, events);
  return p;
}

function setEvents(p: SaxInternals, events: SaxEvents): void {
  p.onopentag = events.onopentag;
  p.onclosetag = events.onclosetag;
  p.ontext = events.ontext;
  p.oncdata = events.oncdata;
  p.onattribute = events.onattribute;
  p.onerror = events.onerror;
  p.ondoctype = events.ondoctype;
  p.onsgmldeclaration = events.onsgmldeclaration;
}

const none = (): void => {};
const NO_EVENTS: SaxEvents = {
  onopentag: none,
  onclosetag: none,
  ontext: none,
  oncdata: none,
  onattribute: none,
  onerror: none,
  ondoctype: none,
  onsgmldeclaration: none,
};

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
  saxParser(NO_EVENTS);
  const p = saxParser({ ...NO_EVENTS, onopentag: () => {} });
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

/** sax holds text until the next tag; past this we move it into the engine's capped accumulator. */
export const FLUSH_TEXT = 64 * 1024;

/** Where a document stands when sax takes it over from the fast path (see `SaxTokenizer.resume`). */
export interface TakeOver {
  /** Names of the open elements, the root first; empty before the root and after it. */
  readonly open: readonly string[];
  /** The root element has opened (and, when `open` is empty, closed). */
  readonly rootSeen: boolean;
}

export class SaxTokenizer {
  readonly #p: SaxInternals;
  readonly #events: SaxEvents;
  readonly #sink: XmlEvents;
  readonly #maxMarkup: number;

  constructor(sink: XmlEvents, maxMarkupLength: number) {
    if (!saxSettled) settleSax();
    this.#sink = sink;
    this.#maxMarkup = maxMarkupLength;
    const p = saxParser(NO_EVENTS);
    this.#events = {
      onopentag: (tag) => sink.startElement(tag.name, tag.attributes),
      onclosetag: () => sink.endElement(),
      ontext: (t) => sink.text(t),
      oncdata: (t) => sink.text(t),
      onattribute: (attr) => sink.attribute(attr.name),
      onerror: (e) => {
        p.error = null;
        sink.error(firstLine(e.message));
      },
      ondoctype: (doctype) => sink.refuse('DOCTYPE', doctype),
      onsgmldeclaration: (decl) => sink.declaration(decl),
    };
    setEvents(p, this.#events);
    this.#p = p;
  }

  /**
   * Puts sax where the fast path stopped: at a point between two tokens, after an event, where
   * sax's state is its open-tag stack and whether the root was seen or closed, nothing else
   * (its text buffer was emptied by that event). Start tags of the same names, read with the
   * events switched off, rebuild exactly that; what follows is written as the document's own.
   */
  resume(at: TakeOver): void {
    if (!at.rootSeen) return;
    const p = this.#p;
    setEvents(p, NO_EVENTS);
    if (at.open.length === 0) p.write('<r/>');
    else for (const name of at.open) p.write(`<${name}>`);
    setEvents(p, this.#events);
  }

  write(text: string): void {
    this.#p.write(text);
    this.#inspect();
  }

  close(): void {
    this.#p.close();
  }

  // Between writes: bound what sax buffers, refuse a DOCTYPE before it is buffered whole.
  #inspect(): void {
    const p = this.#p;
    const state = p.state;
    // In a DOCTYPE, or past one that sax has not finished (its internal subset can leave the
    // DOCTYPE states while `doctype` keeps the text): refuse whatever the write boundaries.
    if ((state >= S_DOCTYPE_FIRST && state <= S_DOCTYPE_LAST) || p.doctype !== '')
      this.#sink.refuse('DOCTYPE', typeof p.doctype === 'string' ? p.doctype : '');
    if ((state === S_SGML_DECL || state === S_SGML_DECL_QUOTED) && /^\s*ENTITY/i.test(p.sgmlDecl)) {
      this.#sink.refuse('ENTITY');
    }
    if (p.textNode.length > FLUSH_TEXT) {
      const t = p.textNode;
      p.textNode = '';
      this.#sink.text(t);
    }
    if (p.cdata.length > FLUSH_TEXT) {
      const t = p.cdata;
      p.cdata = '';
      this.#sink.text(t);
    }
    // Comments are never read: drop what sax collected of a long one.
    if (p.comment.length > FLUSH_TEXT) p.comment = '';
    const max = this.#maxMarkup;
    if (
      p.attribValue.length > max ||
      p.tagName.length > max ||
      p.attribName.length > max ||
      p.sgmlDecl.length > max ||
      p.procInstName.length > max ||
      p.procInstBody.length > max ||
      p.entity.length > max
    ) {
      this.#sink.markupTooLong();
    }
  }
}

function firstLine(message: string): string {
  const nl = message.indexOf('\n');
  return nl === -1 ? message : message.slice(0, nl);
}
