import {
  createLineSplitter,
  InvalidOptionError,
  isHttpUrl,
  newPageDraft,
  type ParseContext,
  type ParseOutcome,
  pythonStrip,
  type TextFormat,
  type TextParser,
} from '@usp-ts/core/parse';

export interface PlainTextOptions {
  /**
   * Lines that are not http(s) URLs each get an `invalid-url` warning up to this many (default 50),
   * then one summary: a junk file must not produce a million warnings. Repeated URLs get
   * `duplicate-url` warnings under their own cap of the same size.
   */
  maxWarnings?: number;
  /** Longest line read, in characters (default 64 KiB); a longer line is skipped with a warning. */
  maxLineLength?: number;
}

const DEFAULTS = {
  // Below the document driver's own cap of 100 per code, so our summary is not swallowed by it.
  maxWarnings: 50,
  maxLineLength: 64 * 1024,
} as const;

/**
 * The plain-text sitemap format: one URL a line. It claims every non-XML document, so it is
 * the fallback: list it after the formats that claim specific documents (robots.txt).
 */
export function plainText(options: PlainTextOptions = {}): TextFormat {
  const opts = checkOptions(options);
  return {
    kind: 'text',
    name: 'text',
    claims: () => true,
    createParser: (ctx: ParseContext) => createTextParser(ctx, opts),
  };
}

function createTextParser(ctx: ParseContext, opts: Required<PlainTextOptions>): TextParser {
  // URL -> the line it first appeared on, for the duplicate warning.
  const seen = new Map<string, number>();
  let lineNumber = 0;
  let skipped = 0;
  let duplicates = 0;
  // 'full' once the driver says the page budget is spent: the next page is still offered, so
  // the driver can tell "there were more" (its `limit` warning); then 'stopped'.
  let state: 'open' | 'full' | 'stopped' = 'open';

  const skip = (message: () => string): void => {
    skipped++;
    if (skipped <= opts.maxWarnings) ctx.warn('invalid-url', message());
  };

  const splitter = createLineSplitter(
    (line, truncated) => {
      lineNumber++;
      ctx.atLine(lineNumber);
      if (state === 'stopped') return;
      const url = pythonStrip(line);
      if (url === '') return;
      if (truncated) {
        skip(() => `Line ${lineNumber} is longer than ${opts.maxLineLength} characters, skipped`);
        return;
      }
      if (!isHttpUrl(url)) {
        skip(() => `Line ${lineNumber} ${quote(url)} is not an http(s) URL, skipped`);
        return;
      }
      // usp de-duplicates on the exact text, keeping the first position.
      const first = seen.get(url);
      if (first !== undefined) {
        duplicates++;
        if (duplicates <= opts.maxWarnings) {
          ctx.warn('duplicate-url', `Line ${lineNumber} ${quote(url)} repeats line ${first}, skipped`);
        }
        return;
      }
      seen.set(url, lineNumber);
      if (state === 'full') {
        ctx.page(newPageDraft(url));
        state = 'stopped';
      } else if (!ctx.page(newPageDraft(url))) {
        state = 'full';
      }
    },
    { maxLineLength: opts.maxLineLength },
  );

  return {
    type: 'PagesTextSitemap',
    write(text) {
      if (state !== 'stopped') splitter.write(text);
    },
    end(truncated = false): ParseOutcome {
      splitter.end(truncated);
      if (skipped > opts.maxWarnings) {
        ctx.warn(
          'invalid-url',
          `${skipped - opts.maxWarnings} more lines that are not http(s) URLs were skipped`,
        );
      }
      if (duplicates > opts.maxWarnings) {
        ctx.warn('duplicate-url', `${duplicates - opts.maxWarnings} more repeated URLs were skipped`);
      }
      return { type: 'PagesTextSitemap' };
    },
  };
}

function quote(s: string): string {
  return JSON.stringify(s.length > 200 ? `${s.slice(0, 200)}…` : s);
}

function checkOptions(options: PlainTextOptions): Required<PlainTextOptions> {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionError('options', 'must be an object');
  const maxWarnings = options.maxWarnings ?? DEFAULTS.maxWarnings;
  const maxLineLength = options.maxLineLength ?? DEFAULTS.maxLineLength;
  if (!Number.isInteger(maxWarnings) || maxWarnings < 0) {
    throw new InvalidOptionError('maxWarnings', `must be a non-negative integer, got ${String(maxWarnings)}`);
  }
  if (!Number.isInteger(maxLineLength) || maxLineLength < 1) {
    throw new InvalidOptionError('maxLineLength', `must be a positive integer, got ${String(maxLineLength)}`);
  }
  return { maxWarnings, maxLineLength };
}
