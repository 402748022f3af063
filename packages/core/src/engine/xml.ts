/**
 * The streaming XML engine: decoded text in, element events out to the format that claims the
 * root element. A tokenizer reports what it reads (xml-events.ts) to the document reader
 * (xml-reader.ts): the fast path (xml-fast.ts) while the document stays within what it takes,
 * sax (xml-sax.ts, the engine of record) for the rest of a document that leaves it, or for the
 * whole document when asked. Memory is bounded whatever the document: character data, markup
 * buffers and nesting are capped, and nothing keeps the document.
 */
import type { ParseContext, XmlHandler } from '../contract/plugin.js';
import type { Registry } from '../contract/registry.js';
import type { DocumentSitemapType } from '../contract/sitemap.js';
import { STOP } from './xml-events.js';
import { FastTokenizer } from './xml-fast.js';
import {
  DEFAULT_XML_LIMITS,
  DocumentReader,
  type XmlEngineLimits,
  type XmlEngineResult,
} from './xml-reader.js';
import { FLUSH_TEXT, SaxTokenizer } from './xml-sax.js';

export {
  DEFAULT_XML_LIMITS,
  detachString,
  type XmlEngineLimits,
  type XmlEngineResult,
} from './xml-reader.js';

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

// Writing the tokenizer bounded pieces lets sax's buffers be inspected (and bounded) between
// pieces; the fast path is written the same pieces, so when sax takes over from it, sax is
// written what it would have been written alone.
const WRITE_SLICE = 64 * 1024;
// The first piece of a document longer than PRIME_MIN is split after the first tag end past
// PRIME_AT (see `write`).
const PRIME_MIN = 1024;
const PRIME_AT = 256;
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

class Engine implements XmlEngine {
  readonly #reader: DocumentReader;
  /** The fast path while it reads the document; null once sax reads it. */
  #fast: FastTokenizer | null = null;
  #sax: SaxTokenizer | null = null;
  #result: XmlEngineResult | null = null;
  /** Whether the first piece was split (see `write`). */
  #primed = false;

  constructor(options: XmlEngineOptions) {
    const reader = new DocumentReader({
      url: options.url,
      registry: options.registry,
      ctx: options.ctx,
      formatCtx: options.formatCtx ?? options.ctx,
      limits: { ...DEFAULT_XML_LIMITS, ...options.limits },
    });
    this.#reader = reader;
    if (options.tokenizer === 'sax') this.#sax = new SaxTokenizer(reader, reader.maxMarkupLength);
    else this.#fast = new FastTokenizer(reader, Math.min(FLUSH_TEXT, reader.maxMarkupLength));
  }

  get done(): boolean {
    return this.#reader.stopped;
  }

  get format(): string | null {
    return this.#reader.formatName;
  }

  get type(): DocumentSitemapType | null {
    return this.#reader.type;
  }

  get tokenizer(): 'fast' | 'sax' {
    return this.#fast === null ? 'sax' : 'fast';
  }

  write(text: string): void {
    if (this.#reader.stopped) return;
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
          if (this.#reader.stopped) return;
          text = text.slice(cut);
        }
      }
      if (text.length <= WRITE_SLICE) this.#writePiece(text);
      else {
        for (let i = 0; i < text.length && !this.#reader.stopped; i += WRITE_SLICE) {
          this.#writePiece(text.slice(i, i + WRITE_SLICE));
        }
      }
    } catch (error) {
      if (error !== STOP) this.#reader.pluginFailed(error);
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
    const sax = new SaxTokenizer(this.#reader, this.#reader.maxMarkupLength);
    this.#sax = sax;
    sax.resume(fast);
    for (const piece of fast.replay()) {
      sax.write(piece);
      if (this.#reader.stopped) return;
    }
  }

  stop(): void {
    if (this.#reader.stopped) return;
    this.#reader.stopped = true;
    this.#reader.truncated = true;
  }

  end(): XmlEngineResult {
    if (this.#result !== null) return this.#result;
    if (!this.#reader.stopped) {
      try {
        const fast = this.#fast;
        if (fast !== null && !fast.end()) this.#toSax(fast);
        if (this.#fast === null && !this.#reader.stopped) {
          this.#reader.ending = true;
          (this.#sax as SaxTokenizer).close();
        }
      } catch (error) {
        if (error !== STOP) this.#reader.pluginFailed(error);
      }
      this.#reader.stopped = true;
    }
    this.#result = this.#reader.finish();
    return this.#result;
  }
}
