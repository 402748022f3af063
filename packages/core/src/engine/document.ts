import { errorText } from '../contract/errors.js';
import { noParserReason, type ParsedDocument } from '../contract/parsed-document.js';
import type {
  DocumentInfo,
  ParseContext,
  ParseOutcome,
  TextFormat,
  TextParser,
  XmlName,
} from '../contract/plugin.js';
import type { DocumentSitemapType, PagesSitemapType } from '../contract/sitemap.js';
import type { WarningCode } from '../contract/warning.js';
import { firstNonWhitespace } from './detect.js';
import { BodyReader, ConsumerFailure, type TextSink } from './document-body.js';
import { DocumentIntake } from './document-intake.js';
import {
  checkParseDocumentOptions,
  type DocumentLimits,
  type ParseDocumentOptions,
} from './document-options.js';
import { ObservedContext } from './observed-context.js';
import { createXmlEngine, type XmlEngine } from './xml.js';

/** Characters of a non-XML document given to text formats to decide. */
const HEAD_CHARS = 1024;

/**
 * Parses one sitemap document: gzip (by magic bytes) → text (BOM, declared encoding, UTF-16)
 * → XML or text → the format that claims it. Streams: memory does not grow with the document,
 * pages flow to `onPages` a piece of the body at a time; the result describes the document as
 * plain data (`sitemapFromDocument` makes it a node). Never throws for bad content or a broken body; throws
 * `InvalidOptionError` for bad options and rethrows what `onPages` throws.
 */
export async function parseDocument(options: ParseDocumentOptions): Promise<ParsedDocument> {
  const limits = checkParseDocumentOptions(options);
  const run = new DocumentRun(options, limits);
  return run.run();
}

/**
 * `sniff`: nothing but whitespace seen yet; `text-head`: not XML, collecting the first
 * characters for the text formats to decide on; `done`: no format reads the rest.
 */
type Mode = 'sniff' | 'text-head' | 'xml' | 'text' | 'done';

/**
 * One document being read: its text (from the byte pipeline, `BodyReader`) goes to the format
 * that claims it, the XML engine or a text format, which write into the `DocumentIntake`.
 */
class DocumentRun implements TextSink {
  readonly url: string;
  readonly #options: ParseDocumentOptions;
  readonly #intake: DocumentIntake;
  /** What formats write into: the intake, or an observed context around it. */
  readonly #formatCtx: ParseContext;
  readonly #body: BodyReader;
  #root: XmlName | null = null;

  #mode: Mode = 'sniff';
  #pending = '';
  #engine: XmlEngine | null = null;
  #textParser: TextParser | null = null;
  #textFormat: TextFormat | null = null;
  #invalidReason: string | null = null;
  #outcome: ParseOutcome | null = null;

  constructor(options: ParseDocumentOptions, limits: DocumentLimits) {
    this.#options = options;
    this.url = options.url;
    const intake = new DocumentIntake(options.url, limits, options.onWarning, options.onPages !== undefined);
    this.#intake = intake;
    this.#formatCtx = options.observer === undefined ? intake : new ObservedContext(intake, options.observer);
    this.#body = new BodyReader(this, {
      signal: options.signal,
      gunzip: options.gunzip,
      observer: options.observer,
      maxBytes: limits.maxDecompressedBytes,
    });
  }

  async run(): Promise<ParsedDocument> {
    try {
      await this.#body.read(this.#options.body);
      this.#endFormat();
      await this.flush();
    } catch (error) {
      throw error instanceof ConsumerFailure ? error.error : error;
    }
    return this.#result();
  }

  // ------------------------------------------------------------------------------------------
  // TextSink: what the byte pipeline asks

  warn(code: WarningCode, message: string): void {
    this.#intake.warn(code, message);
  }

  cut(): void {
    this.#intake.truncated = true;
  }

  finishedEarly(): boolean {
    if (this.#intake.budgetSpent) return true;
    if (this.#mode === 'done') return true;
    return this.#mode === 'xml' && (this.#engine as XmlEngine).done;
  }

  async flush(): Promise<void> {
    const onPages = this.#options.onPages;
    if (onPages === undefined) return;
    const batch = this.#intake.takePages();
    if (batch.length === 0) return;
    try {
      await onPages(batch, this.#pagesType());
    } catch (error) {
      throw new ConsumerFailure(error);
    }
  }

  feed(text: string): void {
    switch (this.#mode) {
      case 'xml':
        (this.#engine as XmlEngine).write(text);
        if (this.#intake.budgetSpent) (this.#engine as XmlEngine).stop();
        return;
      case 'text':
        this.#writeText(text);
        return;
      case 'sniff':
        this.#sniff(text);
        return;
      case 'text-head':
        this.#pending += text;
        if (this.#pending.length >= HEAD_CHARS) this.#startText();
        return;
      case 'done':
        return;
    }
  }

  // ------------------------------------------------------------------------------------------
  // Text to the format

  #pagesType(): PagesSitemapType {
    const declared = this.#mode === 'xml' ? this.#engine?.type : this.#textParser?.type;
    if (declared?.startsWith('Pages')) return declared as PagesSitemapType;
    return this.#mode === 'xml' ? 'PagesXMLSitemap' : 'PagesTextSitemap';
  }

  #sniff(text: string): void {
    const i = firstNonWhitespace(text);
    if (i === -1) {
      // Leading whitespace carries nothing; keep only enough of it for the text formats' head.
      if (this.#pending.length < HEAD_CHARS)
        this.#pending += text.slice(0, HEAD_CHARS - this.#pending.length);
      return;
    }
    if (text.charCodeAt(i) === 0x3c) {
      this.#pending = '';
      this.#mode = 'xml';
      const limits = this.#intake.limits;
      this.#engine = createXmlEngine({
        url: this.url,
        registry: this.#options.registry,
        ctx: this.#intake,
        formatCtx: this.#formatCtx,
        limits: { maxDepth: limits.maxElementDepth, maxTextLength: limits.maxTextLength },
        tokenizer: this.#options.xmlTokenizer,
      });
      this.feed(i === 0 ? text : text.slice(i));
      return;
    }
    this.#mode = 'text-head';
    this.feed(text);
  }

  #startText(): void {
    const pending = this.#pending;
    this.#pending = '';
    const info: DocumentInfo = {
      url: this.url,
      headers: this.#options.headers ?? noHeaders,
      head: pending.slice(0, HEAD_CHARS),
    };
    for (const format of this.#options.registry.textFormats) {
      let claimed = false;
      try {
        claimed = format.claims(info);
      } catch (error) {
        this.warn(
          'plugin-error',
          `Format ${format.name} failed to look at the document: ${errorText(error)}`,
        );
      }
      if (!claimed) continue;
      try {
        this.#textFormat = format;
        this.#textParser = format.createParser(this.#formatCtx);
        this.#mode = 'text';
      } catch (error) {
        this.#pluginFailed(format, error);
        return;
      }
      if (pending.length > 0) this.#writeText(pending);
      return;
    }
    this.#mode = 'done';
    this.#invalidReason = noParserReason(this.url, 'not XML, and no text format claims it');
  }

  #writeText(text: string): void {
    if (this.#intake.budgetSpent) return;
    try {
      (this.#textParser as TextParser).write(text);
    } catch (error) {
      this.#pluginFailed(this.#textFormat as TextFormat, error);
    }
  }

  #pluginFailed(format: TextFormat, error: unknown): void {
    this.warn('plugin-error', `Format ${format.name} failed: ${errorText(error)}`);
    this.#intake.truncated = true;
    this.#mode = 'done';
    this.#textParser = null;
    this.#invalidReason = noParserReason(this.url, `format ${format.name} failed`);
  }

  #endFormat(): void {
    if (this.#mode === 'sniff' || this.#mode === 'text-head') this.#startText();
    if (this.#mode === 'xml') {
      const engine = this.#engine as XmlEngine;
      if (this.#intake.truncated) engine.stop();
      const result = engine.end();
      this.#root = result.root;
      if (result.truncated) this.#intake.truncated = true;
      this.#outcome = result.outcome;
      return;
    }
    if (this.#mode === 'text') {
      const parser = this.#textParser as TextParser;
      try {
        this.#outcome = parser.end(this.#intake.truncated);
      } catch (error) {
        this.#pluginFailed(this.#textFormat as TextFormat, error);
      }
    }
    this.#outcome ??= {
      type: 'InvalidSitemap',
      reason: this.#invalidReason ?? noParserReason(this.url),
    };
  }

  #result(): ParsedDocument {
    const intake = this.#intake;
    intake.closeWarnings();
    const outcome = this.#outcome as ParseOutcome;
    const type = DOCUMENT_TYPES.has(outcome.type) ? outcome.type : 'InvalidSitemap';
    const isIndex = type === 'IndexXMLSitemap' || type === 'IndexRobotsTxtSitemap';
    return {
      url: this.url,
      type,
      reason: type === 'InvalidSitemap' ? (outcome.reason ?? noParserReason(this.url)) : null,
      robots: type === 'IndexRobotsTxtSitemap' ? (outcome.robots ?? null) : null,
      children: isIndex ? intake.children : [],
      warnings: intake.warnings,
      pageCount: type.startsWith('Pages') ? intake.pageCount : 0,
      bytes: this.#body.bytes,
      truncated: intake.truncated,
      format:
        outcome.type === 'InvalidSitemap' ? null : (this.#engine?.format ?? this.#textFormat?.name ?? null),
      encoding: this.#body.encoding,
      gzipLayers: this.#body.gzipLayers,
      root: this.#root,
    };
  }
}

/** The types a format may end a document with; anything else is read as `InvalidSitemap`. */
const DOCUMENT_TYPES: ReadonlySet<string> = new Set<DocumentSitemapType>([
  'PagesXMLSitemap',
  'PagesTextSitemap',
  'PagesRSSSitemap',
  'PagesAtomSitemap',
  'IndexXMLSitemap',
  'IndexRobotsTxtSitemap',
  'InvalidSitemap',
]);

function noHeaders(): string | null {
  return null;
}
