import type {
  ChildRef,
  DocumentToParse,
  ParseDocumentOptions,
  ParsedDocument,
  SkippedSitemap,
  WalkedDocument,
  WebClient,
} from '@usp-ts/core';
import type { Finding, ValidatedSitemap, ValidateOptions } from './validate.js';
import { checkDocument, DocumentCheck, type DocumentResult } from './validate-checks.js';

/** One document the walk reached, as the report shows it. */
interface Reached {
  readonly requestedUrl: string;
  /** The URL its children name it by (after redirects). */
  readonly url: string;
  readonly parentUrl: string | null;
  /** `null` for a redirect onto a sitemap checked already: findings only. */
  readonly summary: ValidatedSitemap | null;
  readonly findings: Finding[];
}

/** A document being parsed: where its request began, which hosts its `<loc>`s may use, its checks. */
interface Parsing {
  readonly requestedUrl: string;
  readonly extraOrigins: readonly string[];
  result?: DocumentResult;
}

export interface ValidationWalkOptions {
  /** A homepage's walk: robots.txt first, `sitemap.xml` when it names none. */
  readonly homepage: boolean;
  readonly maxDepth: number;
  readonly onSitemap: ValidateOptions['onSitemap'];
}

const inaccessible: ValidatedSitemap['type'] = 'InvalidSitemap';

/**
 * validate's view of core's walk: the walk finds the documents (robots.txt, the fallback path,
 * children, repeats, depth, budgets, concurrency) and this runs the checks as its parser and hears
 * what it reached (`onDocument`) and what it left (`onSkipped`). What the walk decides, it decides
 * once, for `usp ls` and `usp validate` alike.
 */
export class ValidationWalk {
  readonly #options: ValidationWalkOptions;
  readonly #reached: Reached[] = [];
  /** Reached documents by the URL their children name them by. */
  readonly #byUrl = new Map<string, Reached>();
  /** Children each index listed, by its URL: the report's order. */
  readonly #listed = new Map<string, readonly ChildRef[]>();
  /** Documents read as robots.txt: a sitemap they name may list URLs of their host. */
  readonly #robots = new Set<string>();
  /** Origins a document's `<loc>`s may use besides its own, by its URL. */
  readonly #extraOrigins = new Map<string, readonly string[]>();
  readonly #parsing = new Map<string, Parsing>();
  /** What the web client answered, by requested URL: an error's message or the final URL. */
  readonly #answers = new Map<string, { error: string } | { finalUrl: string }>();
  /** Documents found and not checked: the walk stopped first. */
  unchecked = 0;
  /** Whether any request got an HTTP answer. */
  reached = false;

  constructor(options: ValidationWalkOptions) {
    this.#options = options;
  }

  /** `client`, its answers noted (the messages of failed requests are in the findings). */
  watch(client: WebClient): WebClient {
    return {
      get: async (url, options) => {
        const response = await client.get(url, options);
        if (response.kind !== 'error' || response.status !== null) this.reached = true;
        this.#answers.set(
          url,
          response.kind === 'error' ? { error: response.message } : { finalUrl: response.url },
        );
        return response;
      },
    };
  }

  readonly beforeParse = (doc: DocumentToParse): void => {
    const parent = doc.parentUrl;
    let extraOrigins: readonly string[] = [];
    // A sitemap named by robots.txt may list URLs of the robots.txt host (cross-submission), and
    // so may the sitemaps below it.
    if (parent !== null) {
      extraOrigins = this.#robots.has(parent)
        ? [new URL(parent).origin]
        : (this.#extraOrigins.get(parent) ?? []);
    }
    this.#extraOrigins.set(doc.finalUrl, extraOrigins);
    this.#parsing.set(doc.finalUrl, { requestedUrl: doc.requestedUrl, extraOrigins });
  };

  /** The walk's parser: the document's checks watch the parse. */
  readonly parse = async (options: ParseDocumentOptions): Promise<ParsedDocument> => {
    const parsing = this.#parsing.get(options.url);
    const origins = new Set([new URL(options.url).origin, ...(parsing?.extraOrigins ?? [])]);
    const { onPages: _pages, onWarning: _warning, ...rest } = options;
    const result = await checkDocument(rest, new DocumentCheck(options.url, origins), true);
    if (parsing !== undefined) parsing.result = result;
    return result.parsed;
  };

  readonly onDocument = (doc: WalkedDocument): void => {
    const url = doc.node.url;
    const parsing = this.#parsing.get(url);
    this.#parsing.delete(url);
    if (parsing?.result !== undefined && parsing.requestedUrl === doc.requestedUrl) {
      this.#checked(doc, parsing.result);
      return;
    }
    const answer = this.#answers.get(doc.requestedUrl);
    if (answer !== undefined && 'finalUrl' in answer && answer.finalUrl !== doc.requestedUrl) {
      // A redirect onto a sitemap this walk has: checked once, under its own URL.
      const findings = [redirected(doc.requestedUrl, answer.finalUrl)];
      this.#add({ requestedUrl: doc.requestedUrl, url, parentUrl: doc.parentUrl, summary: null, findings });
      return;
    }
    const findings: Finding[] = [];
    const message = answer !== undefined && 'error' in answer ? answer.error : null;
    const at = doc.requestedUrl;
    if (this.#isRobots(doc)) {
      // robots.txt is optional; sitemap.xml is tried next.
      const why = message ?? (doc.node.type === 'InvalidSitemap' ? doc.node.reason : '');
      const text = `robots.txt could not be fetched (${why}), so it names no sitemap`;
      findings.push({ severity: 'warning', code: 'no-sitemap', message: text, sitemap: at });
    } else if (message !== null) {
      findings.push({
        severity: 'error',
        code: 'fetch',
        message: `Could not fetch the sitemap: ${message}`,
        sitemap: at,
      });
    } else if (doc.node.type === 'InvalidSitemap') {
      findings.push({ severity: 'error', code: 'fetch', message: doc.node.reason, sitemap: at });
    }
    const summary: ValidatedSitemap = {
      url: at,
      type: inaccessible,
      entries: 0,
      bytes: 0,
      contentType: null,
    };
    this.#add({ requestedUrl: at, url, parentUrl: doc.parentUrl, summary, findings });
    this.#options.onSitemap?.(summary, findings);
  };

  readonly onSkipped = (skipped: SkippedSitemap): void => {
    if (skipped.reason === 'stopped' || skipped.reason === 'unreachable') this.unchecked++;
    else if (skipped.reason === 'too-deep' && skipped.parentUrl !== null) {
      this.#byUrl.get(skipped.parentUrl)?.findings.push({
        severity: 'error',
        code: 'recursion',
        message: `Sitemap ${skipped.url} is nested deeper than ${this.#options.maxDepth} levels`,
        sitemap: skipped.parentUrl,
      });
    }
    // A repeat or a cycle is checked once, where it was first listed.
  };

  /**
   * The documents in the order they were found: level by level, each index's children in its
   * order (a queue's order, whatever order the answers came in).
   */
  inOrder(): { summary: ValidatedSitemap | null; findings: Finding[] }[] {
    const byParent = new Map<string, Map<string, Reached>>();
    const queue: Reached[] = [];
    for (const r of this.#reached) {
      if (r.parentUrl === null) {
        queue.push(r);
        continue;
      }
      const children = byParent.get(r.parentUrl) ?? new Map<string, Reached>();
      byParent.set(r.parentUrl, children);
      children.set(r.requestedUrl, r);
    }
    const placed = new Set<Reached>();
    for (let i = 0; i < queue.length; i++) {
      const r = queue[i];
      placed.add(r);
      const children = byParent.get(r.url);
      if (r.summary === null || children === undefined) continue;
      for (const ref of this.#listed.get(r.url) ?? []) {
        const child = children.get(ref.url);
        if (child !== undefined && !placed.has(child)) {
          placed.add(child);
          queue.push(child);
        }
      }
    }
    return [...queue, ...this.#reached.filter((r) => !placed.has(r))];
  }

  #checked(doc: WalkedDocument, result: DocumentResult): void {
    const { summary, parsed } = result;
    const findings = result.check.findings;
    if (summary.url !== doc.requestedUrl) findings.unshift(redirected(doc.requestedUrl, summary.url));
    this.#add({
      requestedUrl: doc.requestedUrl,
      url: summary.url,
      parentUrl: doc.parentUrl,
      summary,
      findings,
    });
    this.#listed.set(summary.url, doc.children);
    if (summary.type === 'IndexRobotsTxtSitemap') this.#robots.add(summary.url);
    this.#options.onSitemap?.(summary, findings);
    if (this.#isRobots(doc) && summary.type === 'IndexRobotsTxtSitemap' && parsed.children.length === 0) {
      findings.push({
        severity: 'warning',
        code: 'no-sitemap',
        message: 'robots.txt names no sitemap (add a "Sitemap: <absolute URL>" line)',
        sitemap: summary.url,
      });
    }
  }

  #add(reached: Reached): void {
    this.#reached.push(reached);
    this.#byUrl.set(reached.url, reached);
  }

  /** The robots.txt a homepage's walk starts with. */
  #isRobots(doc: WalkedDocument): boolean {
    return this.#options.homepage && doc.parentUrl === null && doc.requestedUrl.endsWith('/robots.txt');
  }
}

function redirected(from: string, to: string): Finding {
  return {
    severity: 'warning',
    code: 'redirect',
    message: `${from} redirects to ${to}: list the final URL`,
    sitemap: to,
  };
}
