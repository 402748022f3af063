// Stand-in for the batch package's politeness-gate interface until it is on main; replaced by a
// re-export of `@usp-ts/batch`'s type then, so both gates keep one contract.

/** Gives the slot back; calling it more than once is harmless. */
export type GateRelease = () => void;

/** Per-host politeness: how many requests in flight to one host, and how far apart they start. */
export interface PolitenessGate {
  /**
   * Resolves once a request to `host` may start; the caller releases the slot when the response
   * body is read or dropped. Rejects (with the signal's reason) when `signal` aborts first.
   */
  acquire(host: string, signal?: AbortSignal): Promise<GateRelease>;
  /** robots.txt asked for this pause between requests to `host` (capped by the gate). */
  setCrawlDelay(host: string, delayMs: number): void;
}

/** The longest Crawl-delay honoured unless told otherwise (as the in-process gate). */
export const DEFAULT_MAX_CRAWL_DELAY_MS = 10_000;
