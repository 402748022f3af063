import type { ChildRef, Page } from '../contract/model.js';
import type { ParseContext } from '../contract/plugin.js';
import { MAX_URLS_PER_SITEMAP } from '../contract/protocol-limits.js';
import type { Warning, WarningCode, WarningListener } from '../contract/warning.js';
import type { DocumentLimits } from './document-options.js';
import { objectArray } from './object-array.js';
import { type UrlProblem, unfetchableUrl, unfetchableUrlMessage } from './url.js';

/** Warnings kept per code and document; the rest are counted in one summary warning. */
const MAX_WARNINGS_PER_CODE = 100;

/**
 * What one document yields, as the `ParseContext` formats write into: its pages (checked, capped
 * by `maxPagesPerDocument`, batched for `onPages`), its children (capped by
 * `maxChildrenPerIndex`) and its warnings (a hundred of a code, then a count).
 */
export class DocumentIntake implements ParseContext {
  readonly url: string;
  readonly limits: DocumentLimits;
  readonly warnings: Warning[] = [];
  readonly #warningCounts = new Map<string, number>();
  readonly #onWarning: WarningListener | undefined;
  /** Pages are batched only for a consumer; without one they are counted. */
  readonly #keepPages: boolean;
  #batch: Page[] = objectArray<Page>();
  pageCount = 0;
  readonly children: ChildRef[] = [];
  /** A per-document cap refused an entry: nothing more is read. */
  budgetSpent = false;
  /** The document was not read to its end (a cap, an abort, a broken body or format). */
  truncated = false;

  constructor(
    url: string,
    limits: DocumentLimits,
    onWarning: WarningListener | undefined,
    keepPages: boolean,
  ) {
    this.url = url;
    this.limits = limits;
    this.#onWarning = onWarning;
    this.#keepPages = keepPages;
  }

  // Positions matter only to an observer (its own context keeps them).
  atEntry(): void {}
  atLine(): void {}

  warn(code: WarningCode, message: string): void {
    const count = (this.#warningCounts.get(code) ?? 0) + 1;
    this.#warningCounts.set(code, count);
    if (count > MAX_WARNINGS_PER_CODE) return;
    this.#emitWarning({ code, message, url: this.url });
  }

  page(page: Page): boolean {
    if (this.pageCount >= this.limits.maxPagesPerDocument) {
      this.#spendBudget(
        `More than ${this.limits.maxPagesPerDocument} pages in one document; the rest were not read`,
      );
      return false;
    }
    if (page.url.length > this.limits.maxUrlLength) {
      this.warn('invalid-url', `Page URL longer than ${this.limits.maxUrlLength} characters skipped`);
      return true;
    }
    const problem = unfetchableUrl(page.url);
    if (problem !== null) {
      this.#warnUnfetchable(problem, 'Page URL', page.url);
      return true;
    }
    if (this.#keepPages) this.#batch.push(page);
    this.pageCount++;
    if (this.pageCount === MAX_URLS_PER_SITEMAP + 1) {
      this.warn(
        'over-spec',
        `More than ${MAX_URLS_PER_SITEMAP} pages in one sitemap (the sitemaps.org limit); all are read`,
      );
    }
    // `true` even for the last page the budget allows: only a refused page says "stop", so the
    // `limit` warning means there really was more.
    return true;
  }

  child(ref: ChildRef): boolean {
    if (this.children.length >= this.limits.maxChildrenPerIndex) {
      this.#spendBudget(
        `More than ${this.limits.maxChildrenPerIndex} child sitemaps in one index; the rest were not read`,
      );
      return false;
    }
    if (ref.url.length > this.limits.maxUrlLength) {
      this.warn(
        'invalid-url',
        `Child sitemap URL longer than ${this.limits.maxUrlLength} characters skipped`,
      );
      return true;
    }
    const problem = unfetchableUrl(ref.url);
    if (problem !== null) {
      this.#warnUnfetchable(problem, 'Child sitemap URL', ref.url);
      return true;
    }
    this.children.push(ref);
    return true;
  }

  /** The pages batched since the last call (empty when there are none). */
  takePages(): Page[] {
    const batch = this.#batch;
    if (batch.length > 0) this.#batch = objectArray<Page>();
    return batch;
  }

  /** Ends the warnings: one per code that went past the cap, saying how many were not listed. */
  closeWarnings(): void {
    for (const [code, count] of this.#warningCounts) {
      if (count > MAX_WARNINGS_PER_CODE) {
        this.#emitWarning({
          code,
          message: `${count - MAX_WARNINGS_PER_CODE} more '${code}' warnings were not listed`,
          url: this.url,
        });
      }
    }
  }

  #warnUnfetchable(problem: UrlProblem, what: string, url: string): void {
    this.warn(problem, `${what} ${unfetchableUrlMessage(problem)}, skipped: ${url}`);
  }

  #spendBudget(message: string): void {
    if (this.budgetSpent) return;
    this.budgetSpent = true;
    this.truncated = true;
    this.warn('limit', message);
  }

  #emitWarning(warning: Warning): void {
    this.warnings.push(warning);
    const listener = this.#onWarning;
    if (listener === undefined) return;
    try {
      listener(warning);
    } catch {
      // A listener's own failure is not the document's; parsing goes on.
    }
  }
}
