/**
 * What a tokenizer reports to the XML engine. sax (the engine of record) and the fast path
 * (xml-fast.ts) both call these, in the order sax emits its events, so the engine above them
 * (namespaces, limits, the format's handler) does not know which one read the document.
 */
export interface XmlEvents {
  /** A start tag, after one `attribute` call per attribute it holds, in document order. */
  startElement(name: string, attrs: Record<string, string>): void;
  /** The end of the innermost open element (a self-closing tag sends `startElement` then this). */
  endElement(): void;
  /** Character data (text or CDATA) since the previous event, entities decoded. */
  text(t: string): void;
  /** One attribute of the start tag being read. */
  attribute(name: string): void;
  /** A syntax error the tokenizer recovered from (its first line). */
  error(message: string): void;
  /** A `<!...>` declaration that is not a comment, CDATA or DOCTYPE. */
  declaration(decl: string): void;
  /** A DOCTYPE or ENTITY declaration: refused, the parse stops. */
  refuse(what: 'DOCTYPE' | 'ENTITY', doctype?: string): never;
  /** A markup token past `maxMarkupLength`: the parse stops. */
  markupTooLong(): never;
}

/** Thrown from inside an event to leave the tokenizer's `write` at once; never escapes the engine. */
export const STOP = Symbol('stop-parsing');

export function isBlank(t: string): boolean {
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return false;
  }
  return true;
}
