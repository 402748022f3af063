/**
 * The fast path: a tokenizer for the XML nearly every sitemap is written in (elements,
 * attributes, text, the five predefined entities and character references, CDATA, comments,
 * processing instructions), about five times cheaper than sax. It reports the events sax would
 * report, in sax's order and with sax's text pieces, for every token it takes; at the first
 * token it does not take whole (a DOCTYPE, an unknown entity, a malformed or unusually long
 * token, anything sax would report an error for) it stops, and sax reads the rest from the
 * point after the last event, where sax's state is only its stack of open tags
 * (`SaxTokenizer.resume`). Before the root element that point is the document's start.
 *
 * Input comes in pieces of any size; a token cut by a piece boundary is read again, whole,
 * with the next piece. The text since the last event is kept in the pieces it came in, so sax
 * is written exactly what it would have been written had it read the document from the start.
 */

import type { XmlEvents } from './xml-events.js';
import type { TakeOver } from './xml-sax.js';

/** `write` needs more input to finish the token at the end. */
const MORE = -1;
/** The token is outside the fast path's subset: sax takes over. */
const BAIL = -2;
/** Writes in a row that end inside one token before sax takes over (a body dribbled in bytes). */
const MAX_STALLS = 16;
/** Entity names longer than this (`#x10FFFF` is 8) go to sax. */
const MAX_ENTITY = 10;
/**
 * Tokens `#scan` reads in one call before it returns to `write` (which calls it again). A call
 * over a whole 64 KiB piece outlives the optimising compiler's first version of `#scan`, so V8
 * compiled it a second time to replace the running call (on-stack replacement): one of the
 * largest compiles of a document's first parse. Short calls enter the compiled code at the next
 * call instead (issue 37: a fresh process's CPU on the 1k news sitemap 8 % lower, image 4 %).
 */
const TOKENS_PER_CALL = 32;

// ASCII name characters; everything else in a name (valid XML or not) goes to sax.
const NAME_START = new Uint8Array(128);
const NAME = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const letter = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x3a;
  NAME_START[c] = letter ? 1 : 0;
  NAME[c] = letter || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e ? 1 : 0;
}

// Arrays of strings from the start (see object-array.ts): `slice` keeps this one's elements kind.
const EMPTY_NAMES: string[] = [''].slice(0, 0);

/**
 * The attributes of every start tag without any: nearly all of a sitemap's (three a page of a
 * plain urlset, each an object of its own before: ~6 % of a fresh batch's allocation). Frozen,
 * as handlers may keep `attrs` (plugin.ts).
 */
const NO_ATTRIBUTES: Record<string, string> = Object.freeze({});

/** Names shorter than 13 characters, by first character and length (`StartTag`'s `#nameAt`). */
const SHORT_NAME_MASK = 255;
const SHORT_NAMES: string[] = new Array<string>(SHORT_NAME_MASK + 1).fill('');

const isWs = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

export class FastTokenizer implements TakeOver {
  readonly #sink: XmlEvents;
  /** Longest stretch from one event to the next taken; longer goes to sax (see the constructor). */
  readonly #max: number;
  readonly open: string[] = EMPTY_NAMES.slice();
  rootSeen = false;
  /** Input since the last event, not read yet; `#pieces` is the same text as it was written. */
  #tail = '';
  #pieces: string[] = [];
  #stalls = 0;
  /** What sax is to be written when it takes over, in write-sized pieces. */
  #replay: string[] = [];
  readonly #tag = new StartTag();
  /** `#scan` returned after TOKENS_PER_CALL tokens, with input left to read. */
  #paused = false;

  /**
   * `maxStretch` is the engine's markup limit and sax's text flush size at most: sax acts on a
   * buffer only past those (a flush splits text, a limit stops the parse), so a stretch no
   * longer than both reads the same whichever tokenizer reads it.
   */
  constructor(sink: XmlEvents, maxStretch: number) {
    this.#sink = sink;
    this.#max = maxStretch;
  }

  /** Reads a piece; false when sax is to take over (from `takeOver` and `replay`). */
  write(piece: string): boolean {
    const tail = this.#tail;
    const buf = tail.length === 0 ? piece : tail + piece;
    let commit = 0;
    do commit = this.#scan(buf, commit);
    while (this.#paused);
    if (commit < 0) {
      const at = -commit - 1;
      this.#replay =
        at >= tail.length ? [piece.slice(at - tail.length)] : [...dropChars(this.#pieces, at), piece];
      return false;
    }
    if (commit >= tail.length) {
      this.#pieces = commit - tail.length < piece.length ? [piece.slice(commit - tail.length)] : [];
      this.#stalls = 0;
    } else {
      this.#pieces = dropChars(this.#pieces, commit);
      this.#pieces.push(piece);
      this.#stalls++;
    }
    this.#tail = commit === 0 ? buf : buf.slice(commit);
    if (this.#tail.length > this.#max || this.#stalls > MAX_STALLS) {
      this.#replay = this.#pieces;
      return false;
    }
    return true;
  }

  /** The input is over: true when the document ended cleanly here, else sax is to take over. */
  end(): boolean {
    if (this.rootSeen && this.open.length === 0 && isBlankText(this.#tail)) return true;
    this.#replay = this.#pieces;
    return false;
  }

  /** The input sax is to read, from the point after the last event, as it was written. */
  replay(): readonly string[] {
    return this.#replay;
  }

  /**
   * Reads `buf` (the input since the last event) token by token from `from` (0, or where the
   * previous call paused), sending each event; returns where the input not yet read starts (a
   * point after an event), or `-(that point) - 1` when it stopped at a token for sax. After
   * TOKENS_PER_CALL tokens it returns early with `#paused` set; it pauses only past the root's
   * start tag, right after an event, so no text is pending.
   */
  #scan(buf: string, from: number): number {
    const len = buf.length;
    const sink = this.#sink;
    const open = this.open;
    const max = this.#max;
    let commit = from;
    let i = from;
    let tokens = 0;
    this.#paused = false;
    // Character data since the last event: sax sends it as one piece, before the next event.
    let text = '';
    let amp = -2;
    if (!this.rootSeen && len > 0 && buf.charCodeAt(0) === 0xfeff) i = 1;
    for (;;) {
      if (open.length > 0) {
        const lt = buf.indexOf('<', i);
        if (lt === -1) return commit;
        if (lt > i) {
          if (amp !== -1 && amp < i) amp = buf.indexOf('&', i);
          let t: string | null;
          if (amp !== -1 && amp < lt) {
            t = decode(buf, i, lt);
            if (t === null) return -commit - 1;
          } else t = buf.slice(i, lt);
          text = text === '' ? t : text + t;
        }
        i = lt;
      } else {
        // Outside the root only whitespace and markup: anything else is an error for sax.
        while (i < len && isWs(buf.charCodeAt(i))) i++;
        if (i === len) return commit;
        if (buf.charCodeAt(i) !== 0x3c) return -commit - 1;
      }
      if (i + 1 >= len) return commit;
      const c = buf.charCodeAt(i + 1);
      let end: number;
      if (c === 0x2f) {
        if (open.length === 0) return -commit - 1;
        end = closeTagEnd(buf, i, open[open.length - 1] as string);
        if (end === MORE) return commit;
        if (end === BAIL || end - commit > max) return -commit - 1;
        if (text !== '') {
          sink.text(text);
          text = '';
        }
        open.pop();
        sink.endElement();
      } else if (c < 128 && NAME_START[c] === 1) {
        // A second root element is an error for sax.
        if (open.length === 0 && this.rootSeen) return -commit - 1;
        const tag = this.#tag;
        end = tag.read(buf, i);
        if (end === MORE) return commit;
        if (end === BAIL || end - commit > max) return -commit - 1;
        if (text !== '') {
          sink.text(text);
          text = '';
        }
        const names = tag.attrNames;
        for (let k = 0; k < tag.count; k++) sink.attribute(names[k] as string);
        this.rootSeen = true;
        sink.startElement(tag.name, tag.attrs);
        if (tag.selfClosing) sink.endElement();
        else open.push(tag.name);
      } else if (c === 0x21) {
        if (buf.startsWith('<!--', i)) {
          const dashes = buf.indexOf('--', i + 4);
          if (dashes === -1 || dashes + 2 >= len) return commit;
          if (buf.charCodeAt(dashes + 2) !== 0x3e) return -commit - 1;
          end = dashes + 3;
          if (end - commit > max) return -commit - 1;
          // sax sends no event for an empty comment: the text around it is one piece.
          if (dashes === i + 4) {
            i = end;
            continue;
          }
          if (text !== '') {
            sink.text(text);
            text = '';
          }
        } else if (open.length > 0 && buf.startsWith('<![CDATA[', i)) {
          const close = buf.indexOf(']]>', i + 9);
          if (close === -1) return commit;
          end = close + 3;
          if (end - commit > max) return -commit - 1;
          if (text !== '') {
            sink.text(text);
            text = '';
          }
          if (close > i + 9) sink.text(buf.slice(i + 9, close));
        } else if (isCut(buf, i, '<!--') || (open.length > 0 && isCut(buf, i, '<![CDATA['))) {
          return commit;
        } else return -commit - 1;
      } else if (c === 0x3f) {
        const close = buf.indexOf('?>', i + 2);
        if (close === -1) return commit;
        // sax reads `??>` as part of the body: such an instruction goes on.
        if (close > i + 2 && buf.charCodeAt(close - 1) === 0x3f) return -commit - 1;
        end = close + 2;
        if (end - commit > max) return -commit - 1;
        if (text !== '') {
          sink.text(text);
          text = '';
        }
      } else return -commit - 1;
      i = end;
      // Before the root, sax takes over from the document's start.
      if (this.rootSeen) {
        commit = end;
        if (++tokens === TOKENS_PER_CALL) {
          this.#paused = true;
          return commit;
        }
      }
    }
  }
}

/** The start tag the fast path read last: its name and attributes, in document order. */
class StartTag {
  name = '';
  attrs: Record<string, string> = NO_ATTRIBUTES;
  readonly attrNames: string[] = EMPTY_NAMES.slice();
  count = 0;
  selfClosing = false;
  readonly #names = new Map<string, string>();

  /**
   * Reads the start tag at `i` into `name`, `attrs`, `attrNames` (`count` of them) and `selfClosing`;
   * returns the index after it, MORE or BAIL.
   */
  read(buf: string, i: number): number {
    const len = buf.length;
    let j = i + 2;
    while (j < len && NAME[buf.charCodeAt(j)] === 1) j++;
    if (j >= len) return MORE;
    this.name = this.#nameAt(buf, i + 1, j);
    let attrs = NO_ATTRIBUTES;
    this.attrs = attrs;
    this.count = 0;
    let c = buf.charCodeAt(j);
    for (;;) {
      if (c === 0x3e) {
        this.selfClosing = false;
        return j + 1;
      }
      if (c === 0x2f) {
        if (j + 1 >= len) return MORE;
        if (buf.charCodeAt(j + 1) !== 0x3e) return BAIL;
        this.selfClosing = true;
        return j + 2;
      }
      if (!isWs(c)) return BAIL;
      do j++;
      while (j < len && isWs(buf.charCodeAt(j)));
      if (j >= len) return MORE;
      c = buf.charCodeAt(j);
      if (c === 0x3e || c === 0x2f) continue;
      if (c >= 128 || NAME_START[c] !== 1) return BAIL;
      const nameFrom = j;
      do j++;
      while (j < len && NAME[buf.charCodeAt(j)] === 1);
      const nameTo = j;
      while (j < len && isWs(buf.charCodeAt(j))) j++;
      if (j >= len) return MORE;
      if (buf.charCodeAt(j) !== 0x3d) return BAIL;
      do j++;
      while (j < len && isWs(buf.charCodeAt(j)));
      if (j >= len) return MORE;
      const q = buf.charCodeAt(j);
      if (q !== 0x22 && q !== 0x27) return BAIL;
      const close = buf.indexOf(q === 0x22 ? '"' : "'", j + 1);
      if (close === -1) return MORE;
      const value = valueAt(buf, j + 1, close);
      if (value === null) return BAIL;
      const name = this.#nameAt(buf, nameFrom, nameTo);
      // A repeated attribute (sax drops it silently) or one named like a property of every
      // object (`__proto__`): rare enough to leave to sax.
      if (name in attrs) return BAIL;
      if (attrs === NO_ATTRIBUTES) {
        attrs = {};
        this.attrs = attrs;
      }
      attrs[name] = value;
      this.attrNames[this.count++] = name;
      j = close + 1;
      if (j >= len) return MORE;
      c = buf.charCodeAt(j);
    }
  }

  /**
   * A name cut out of the input. V8 keeps a cut of 13 characters or more as a view of the whole
   * piece, which a handler keeping the name would pin; such names are kept once, copied.
   */
  #nameAt(buf: string, from: number, to: number): string {
    const len = to - from;
    if (len < 13) {
      // A document repeats a few names (`url`, `loc`, `lastmod`): the one last seen with this
      // first character and length is taken again rather than a new string cut each time.
      const slot = (buf.charCodeAt(from) * 16 + len) & SHORT_NAME_MASK;
      const known = SHORT_NAMES[slot] as string;
      if (known.length === len && buf.startsWith(known, from)) return known;
      const cut = buf.slice(from, to);
      SHORT_NAMES[slot] = cut;
      return cut;
    }
    const name = buf.slice(from, to);
    let kept = this.#names.get(name);
    if (kept === undefined) {
      kept = ` ${name}`.slice(1);
      if (this.#names.size < 256) this.#names.set(kept, kept);
    }
    return kept;
  }
}

/** `pieces` without their first `n` characters. */
function dropChars(pieces: string[], n: number): string[] {
  if (n === 0) return pieces;
  const out: string[] = [];
  for (const p of pieces) {
    if (n >= p.length) n -= p.length;
    else {
      out.push(n === 0 ? p : p.slice(n));
      n = 0;
    }
  }
  return out;
}

/** `buf` ends at `i` with the start of `token`: the rest is still to come. */
function isCut(buf: string, i: number, token: string): boolean {
  const rest = buf.length - i;
  return rest < token.length && token.startsWith(buf.slice(i));
}

function isBlankText(t: string): boolean {
  for (let i = 0; i < t.length; i++) if (!isWs(t.charCodeAt(i))) return false;
  return true;
}

/** The end tag of `name` at `i`: the index after it, MORE or BAIL (another name: sax's error). */
function closeTagEnd(buf: string, i: number, name: string): number {
  const len = buf.length;
  let j = i + 2 + name.length;
  if (j >= len) return MORE;
  if (!buf.startsWith(name, i + 2)) return BAIL;
  let c = buf.charCodeAt(j);
  if (c === 0x3e) return j + 1;
  if (!isWs(c)) return BAIL;
  do {
    if (++j >= len) return MORE;
    c = buf.charCodeAt(j);
  } while (isWs(c));
  return c === 0x3e ? j + 1 : BAIL;
}

/** An attribute value, entities decoded, copied when long (see `#nameAt`); null: sax's to read. */
function valueAt(buf: string, from: number, to: number): string | null {
  const amp = buf.indexOf('&', from);
  if (amp !== -1 && amp < to) return decode(buf, from, to);
  const value = buf.slice(from, to);
  return to - from < 13 ? value : ` ${value}`.slice(1);
}

/** `buf[from, to)` with its entity references replaced; null at one sax would report. */
function decode(buf: string, from: number, to: number): string | null {
  let out = '';
  let start = from;
  let amp = buf.indexOf('&', from);
  while (amp !== -1 && amp < to) {
    let semi = amp + 1;
    const limit = Math.min(to, amp + 2 + MAX_ENTITY);
    while (semi < limit && buf.charCodeAt(semi) !== 0x3b) semi++;
    if (semi >= limit) return null;
    const ch = entity(buf, amp + 1, semi);
    if (ch === null) return null;
    out += buf.slice(start, amp) + ch;
    start = semi + 1;
    amp = buf.indexOf('&', start);
  }
  return out + buf.slice(start, to);
}

/**
 * The character `&name;` stands for, for the predefined entities and character references to
 * XML characters, as sax reads them; null for anything else.
 */
function entity(buf: string, from: number, to: number): string | null {
  const first = buf.charCodeAt(from);
  if (first === 0x23) {
    let k = from + 1;
    let base = 10;
    if (k < to && (buf.charCodeAt(k) | 0x20) === 0x78) {
      base = 16;
      k++;
    }
    if (k === to) return null;
    let v = 0;
    for (; k < to; k++) {
      const c = buf.charCodeAt(k);
      let d: number;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (base === 16 && (c | 0x20) >= 0x61 && (c | 0x20) <= 0x66) d = (c | 0x20) - 0x57;
      else return null;
      v = v * base + d;
      if (v > 0x10ffff) return null;
    }
    const xmlChar =
      v === 0x9 ||
      v === 0xa ||
      v === 0xd ||
      (v >= 0x20 && v <= 0xd7ff) ||
      (v >= 0xe000 && v <= 0xfffd) ||
      v >= 0x10000;
    return xmlChar ? String.fromCodePoint(v) : null;
  }
  switch (to - from) {
    case 2:
      if (buf.charCodeAt(from + 1) !== 0x74) return null;
      return first === 0x6c ? '<' : first === 0x67 ? '>' : null;
    case 3:
      return buf.startsWith('amp', from) ? '&' : null;
    case 4:
      return buf.startsWith('quot', from) ? '"' : buf.startsWith('apos', from) ? "'" : null;
    default:
      return null;
  }
}
