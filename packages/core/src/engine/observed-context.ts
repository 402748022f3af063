import type { ChildRef, Page } from '../contract/model.js';
import type { DocumentPosition, ParseContext, ParseLimits } from '../contract/plugin.js';
import type { WarningCode } from '../contract/warning.js';
import type { ParseObserver } from './document-options.js';

/**
 * The context formats get when an observer is watching: it tells the observer what the format
 * reports, with the position the format last gave, then passes it on to the run.
 */
export class ObservedContext implements ParseContext {
  readonly url: string;
  readonly limits: ParseLimits;
  #position: DocumentPosition | null = null;

  constructor(
    readonly run: ParseContext,
    readonly observer: ParseObserver,
  ) {
    this.url = run.url;
    this.limits = run.limits;
  }

  atEntry(entry: number): void {
    this.#position = entry === 0 ? null : { entry };
    this.observer.at?.(this.#position);
  }

  atLine(line: number): void {
    this.#position = { line };
    this.observer.at?.(this.#position);
  }

  warn(code: WarningCode, message: string): void {
    this.observer.warn?.(code, message, this.#position);
    this.run.warn(code, message);
  }

  page(page: Page): boolean {
    this.observer.page?.(page, this.#position);
    return this.run.page(page);
  }

  child(ref: ChildRef): boolean {
    this.observer.child?.(ref, this.#position);
    return this.run.child(ref);
  }
}
